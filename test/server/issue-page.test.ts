/**
 * The HTML issue page over the real server and store: what it shows (now, runs, turns, the
 * orchestrator's comments), that unknown money reads "—", and that identifiers and every other
 * value written by someone else reach it only as text, whatever characters they hold.
 */
import { describe, expect, it } from 'vitest';
import { ISSUE_PAGE_CSP } from '../../src/server/issue-page.js';
import { getJson, issue, MASKED, request, runningEntry, started } from './support.js';

const IMG = '<img src=x onerror=alert(1)>';

/** The text of the element carrying `data-field="<field>"` in the row `<tr data-run-id="<id>">`. */
function runCell(html: string, runId: number, field: string): string | null {
  const row = new RegExp(`<tr data-run-id="${runId}">(.*?)</tr>`).exec(html)?.[1] ?? '';
  return new RegExp(`<td data-field="${field}"[^>]*>(.*?)</td>`).exec(row)?.[1] ?? null;
}

function expectHtmlHeaders(headers: Record<string, unknown>): void {
  expect(headers['content-type']).toBe('text/html; charset=utf-8');
  expect(headers['content-security-policy']).toBe(ISSUE_PAGE_CSP);
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['x-content-type-options']).toBe('nosniff');
}

describe('GET /issues/:identifier', () => {
  it('is an HTML page of the issue: what it does now, every run with its turns, the comments the orchestrator made; unknown cost reads "—", never $0.00', async () => {
    const s = await started();
    s.emit({
      type: 'comment',
      issueId: 'issue-1',
      lifecycle: 'failure',
      result: 'success',
      body: `Orchestrator session failed.\nError: <b>port_exit</b> (${MASKED})`,
    });
    s.emit({ type: 'comment', issueId: 'issue-1', lifecycle: 'dispatch', result: 'error', body: 'started' });
    s.emit({
      type: 'comment',
      issueId: 'issue-9',
      lifecycle: 'dispatch',
      result: 'success',
      body: 'not ENG-1',
    });

    const res = await request(`${s.url}/issues/ENG-1`);
    expect(res.status).toBe(200);
    expectHtmlHeaders(res.headers);
    expect(ISSUE_PAGE_CSP).not.toContain('script-src');
    expect(res.body).not.toMatch(/<script\b/i);
    expect(res.body).toContain('<span data-testid="identifier">ENG-1</span>');
    expect(res.body).toContain('data-testid="status" data-value="idle"');

    // Both runs, newest first, each with its turns; the unpriced one shows a dash.
    expect(res.body.indexOf(`data-run-id="${s.runs.eng1Second}"`)).toBeLessThan(
      res.body.indexOf(`data-run-id="${s.runs.eng1First}"`),
    );
    expect(runCell(res.body, s.runs.eng1First, 'cost')).toBe('—');
    expect(runCell(res.body, s.runs.eng1First, 'outcome')).toBe('failed');
    expect(runCell(res.body, s.runs.eng1First, 'error')).toBe('port_exit: agent exited 3 (***)');
    expect(runCell(res.body, s.runs.eng1Second, 'cost')).toBe('$0.01');
    expect(res.body).not.toContain('$0.00<');
    expect(res.body.match(/<tr data-turn="/g)).toHaveLength(3);

    // The comments, oldest first, escaped and masked; one the tracker refused says so.
    expect(res.body).toContain('Error: &lt;b&gt;port_exit&lt;/b&gt; (***)');
    expect(res.body).not.toContain('<b>port_exit');
    expect(res.body).not.toContain(MASKED);
    expect(res.body).toContain('data-lifecycle="dispatch" data-posted="false"');
    expect(res.body).toContain('not posted: the tracker refused it');
    expect(res.body).not.toContain('not ENG-1');

    // The JSON form carries the same comments.
    const { json } = await getJson(`${s.url}/api/v1/issues/ENG-1`);
    expect(json.comments).toEqual([
      {
        at: expect.any(String),
        lifecycle: 'failure',
        posted: true,
        body: 'Orchestrator session failed.\nError: <b>port_exit</b> (***)',
      },
      { at: expect.any(String), lifecycle: 'dispatch', posted: false, body: 'started' },
    ]);
    expect(json).toMatchObject({ status: 'idle', waiting: null, title: null });
  });

  it('a waiting issue that never ran has a page (and a JSON document) saying why, linking its blockers', async () => {
    const s = await started((h) => {
      h.snapshot.waiting = [
        {
          issueId: 'issue-7',
          identifier: 'ENG-7',
          title: `Ship it ${IMG}`,
          state: 'Todo',
          reason: 'blocked',
          detail: 'waiting on acme/web#9, ENG-1',
          blockedBy: ['acme/web#9', 'ENG-1'],
          seenAtMs: Date.parse('2025-03-01T11:59:00.000Z'),
        },
      ];
    });
    const res = await request(`${s.url}/issues/ENG-7`);
    expect(res.status).toBe(200);
    expect(res.body).toContain('data-testid="status" data-value="waiting"');
    expect(res.body).toContain(
      `<p class="title" data-testid="title">Ship it &lt;img src=x onerror=alert(1)&gt;</p>`,
    );
    expect(res.body).toContain('<dd data-field="why">waiting on acme/web#9, ENG-1</dd>');
    expect(res.body).toContain('<a href="/issues/acme%2Fweb%239">acme/web#9</a>');
    expect(res.body).toContain('<a href="/issues/ENG-1">ENG-1</a>');
    expect(res.body).toContain('No runs recorded');

    const { status, json } = await getJson(`${s.url}/api/v1/issues/ENG-7`);
    expect(status).toBe(200);
    expect(json).toMatchObject({
      issue_id: 'issue-7',
      status: 'idle',
      title: `Ship it ${IMG}`,
      waiting: {
        reason: 'blocked',
        detail: 'waiting on acme/web#9, ENG-1',
        blocked_by: ['acme/web#9', 'ENG-1'],
      },
      runs: [],
    });
  });

  it.each([
    ['a slash and a hash', 'acme/web#9', '/issues/acme%2Fweb%239'],
    ['spaces', 'two words here', '/issues/two%20words%20here'],
    ['markup', IMG, `/issues/${encodeURIComponent(IMG)}`],
    ['quotes', `say "hi" it's`, `/issues/${encodeURIComponent(`say "hi" it's`)}`],
    ['a percent sign', '100%25', '/issues/100%2525'],
    ['only dots', '..', '/issues?identifier=..'],
  ])('an identifier with %s is found at its encoded path and shown as text', async (_, identifier, path) => {
    const s = await started((h) => {
      h.snapshot.running = [runningEntry({ issue: issue('hostile-1', identifier, { title: IMG }) })];
    });
    const res = await request(`${s.url}${path}`);
    expect(res.status, path).toBe(200);
    const escaped = identifier
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
      .replaceAll('"', '&quot;')
      .replaceAll("'", '&#39;');
    expect(res.body).toContain(`<span data-testid="identifier">${escaped}</span>`);
    expect(res.body).toContain('data-testid="status" data-value="running"');
    expect(res.body).not.toContain('<img');
  });

  it('an unknown identifier is a 404 page that shows it as text', async () => {
    const s = await started();
    const res = await request(`${s.url}/issues/${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(res.status).toBe(404);
    expectHtmlHeaders(res.headers);
    expect(res.body).toContain('No issue &lt;script&gt;alert(1)&lt;/script&gt; is running');
    expect(res.body).not.toMatch(/<script\b/i);
  });

  it('answers HEAD without a body, refuses other methods, and wants exactly one identifier', async () => {
    const s = await started();
    const get = await request(`${s.url}/issues/ENG-1`);
    const head = await request(`${s.url}/issues/ENG-1`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
    expect((await request(`${s.url}/issues/ENG-1`, { method: 'POST' })).status).toBe(405);
    for (const path of ['/issues', '/issues?identifier=', '/issues?identifier=a&identifier=b']) {
      const res = await getJson(`${s.url}${path}`);
      expect(res.status, path).toBe(400);
      expect((res.json.error as Record<string, unknown>).code).toBe('invalid_parameter');
    }
    expect((await request(`${s.url}/issues/%E0%A4%A`)).status).toBe(400);
  });
});
