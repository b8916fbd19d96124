/**
 * The dashboard live, end to end: the real `orchestrator run --port N` (file tracker, mock
 * runtime as real subprocesses, the real HTTP server and event stream) with Debian's chromium
 * watching the page. Mock output is slowed (`mock.line_delay_ms`) so a session lives for a few
 * seconds and its token count rises in steps the page must show.
 *
 * The page is sampled every 100 ms into a timeline and the assertions read the timeline, so
 * nothing depends on catching one exact moment.
 */
import type { Browser, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { browserSkipReason, launchChromium, screenshotPath, watchPage } from '../support/browser.js';
import { freePort } from '../support/ports.js';
import {
  createProject,
  makeIssue,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const IMG = '<img src=x onerror=alert(1)>';
const LINE_DELAY_MS = 700;
/** E-1's requests: (input, output) each; the session total rises by their sum at every line. */
const E1_REQUESTS: [number, number][] = [
  [100, 10],
  [200, 20],
  [300, 30],
  [400, 40],
  [500, 50],
  [600, 60],
  [700, 70],
];
const E1_TOTAL = E1_REQUESTS.reduce((sum, [i, o]) => sum + i + o, 0);

interface Sample {
  atMs: number;
  connection: string | null;
  running: { issue: string; title: string; tokens: number | null }[];
  retrying: string[];
  runs: { issue: string; outcome: string | null; tokens: number | null }[];
  /** Elements a title rendered as markup would have created. */
  injected: number;
}

function sample(page: Page): Promise<Sample> {
  return page.evaluate(() => {
    const rows = (table: string) =>
      Array.from(document.querySelectorAll(`table[data-testid="${table}"] tbody tr[data-issue]`));
    const field = (row: Element, name: string) => row.querySelector(`[data-field="${name}"]`);
    const num = (node: Element | null) => {
      const v = node?.getAttribute('data-value');
      return v === null || v === undefined ? null : Number(v);
    };
    return {
      atMs: Date.now(),
      connection: document.querySelector('[data-testid="connection"]')?.getAttribute('data-status') ?? null,
      running: rows('running').map((r) => ({
        issue: r.getAttribute('data-issue') ?? '',
        title: field(r, 'title')?.textContent ?? '',
        tokens: num(field(r, 'tokens')),
      })),
      retrying: rows('retrying').map((r) => r.getAttribute('data-issue') ?? ''),
      runs: rows('runs').map((r) => ({
        issue: r.getAttribute('data-issue') ?? '',
        outcome: field(r, 'outcome')?.getAttribute('data-value') ?? null,
        tokens: num(field(r, 'tokens')),
      })),
      injected:
        document.querySelectorAll('img, svg, iframe').length + document.querySelectorAll('script').length - 1,
    };
  });
}

const skip = browserSkipReason();
if (skip !== null) process.stderr.write(`dashboard e2e: ${skip}\n`);

describe.skipIf(skip !== null)('dashboard against the running service', () => {
  let browser: Browser | null = null;

  afterEach(async () => {
    await browser?.close();
    browser = null;
  });

  it('shows a session appear, its tokens rise and its run finish with the outcome; an `<img onerror>` title stays text', {
    timeout: 180_000,
  }, async () => {
    const e1 = [...E1_REQUESTS.map(([i, o]) => `!usage ${i} ${o}`), '!ok finished'].join('\n');
    const issues = [
      makeIssue(1, e1, { title: 'tokens rise' }),
      makeIssue(2, '!usage 40 2\n!usage 40 2\n!ok done', { title: IMG }),
      makeIssue(3, '!crash once\n!ok recovered', { title: 'crashes once' }),
    ];
    // Parked outside the active states until the page watches, so a slow browser start misses nothing.
    const project = createProject({
      issues: issues.map((i) => ({ ...i, state: 'Backlog' })),
      // E-3 waits 8 s in the retry queue, longer than a screenshot takes on a loaded machine.
      config: { mock: { line_delay_ms: LINE_DELAY_MS }, agent: { max_retry_backoff_ms: 8_000 } },
    });
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    let service: ServiceHandle | null = startService(project, { args: ['--port', String(port)] });
    try {
      const live = service;
      await live.waitForLog('the HTTP server to listen', (l) => l.msg === 'http server listening', {
        timeoutMs: 60_000,
      });
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const watch = watchPage(page, origin);
      await page.goto(`${origin}/`);
      await waitFor('the page to be live', async () => (await sample(page)).connection === 'live', {
        timeoutMs: 30_000,
        explain: () => live.tail(),
      });
      project.writeIssues(issues);

      const timeline: Sample[] = [];
      let midRunShot = false;
      const explain = () =>
        `${live.tail()}\nlast sample: ${JSON.stringify(timeline.at(-1), null, 1)}\n` +
        `E-1 tokens seen: ${JSON.stringify(e1Tokens(timeline))}`;
      await waitFor(
        'E-1, E-2 and E-3 to show succeeded runs, E-1 to leave the running table',
        async () => {
          const s = await sample(page);
          timeline.push(s);
          // Only once the rise was seen: a screenshot on a loaded machine can take seconds.
          if (!midRunShot && new Set(e1Tokens(timeline).filter((t) => t > 0)).size >= 2) {
            midRunShot = true;
            await page.screenshot({ path: screenshotPath('live-service-running'), fullPage: true });
          }
          const succeeded = (issue: string) =>
            s.runs.some((r) => r.issue === issue && r.outcome === 'succeeded');
          return (
            succeeded('E-1') &&
            succeeded('E-2') &&
            succeeded('E-3') &&
            !s.running.some((r) => r.issue === 'E-1')
          );
        },
        { timeoutMs: 120_000, intervalMs: 100, explain },
      );
      await page.screenshot({ path: screenshotPath('live-service'), fullPage: true });

      // The session appeared, and its tokens rose in steps while it ran.
      const seen = e1Tokens(timeline);
      expect(seen.length, explain()).toBeGreaterThan(0);
      const distinct = [...new Set(seen.filter((t) => t > 0))];
      expect(distinct.length, explain()).toBeGreaterThanOrEqual(2);
      expect(distinct, 'tokens never go down').toEqual([...distinct].sort((a, b) => a - b));
      expect(Math.max(...distinct)).toBeLessThanOrEqual(E1_TOTAL);

      // While it ran, its open run was already in the history (no outcome yet).
      expect(
        timeline.some(
          (s) =>
            s.running.some((r) => r.issue === 'E-1') &&
            s.runs.some((r) => r.issue === 'E-1' && r.outcome === null),
        ),
        explain(),
      ).toBe(true);

      // It left the running table and its run shows the outcome and the final count.
      const last = timeline.at(-1)!;
      expect(last.running.map((r) => r.issue)).not.toContain('E-1');
      expect(last.runs.find((r) => r.issue === 'E-1')).toEqual({
        issue: 'E-1',
        outcome: 'succeeded',
        tokens: E1_TOTAL,
      });

      // The crash went through the retry queue and left a failed run behind.
      expect(
        timeline.some((s) => s.retrying.includes('E-3')),
        explain(),
      ).toBe(true);
      expect(last.runs.filter((r) => r.issue === 'E-3').map((r) => r.outcome)).toEqual([
        'succeeded',
        'failed',
      ]);

      // The hostile title was shown as its characters and never became markup.
      const titles = timeline.flatMap((s) => s.running.filter((r) => r.issue === 'E-2').map((r) => r.title));
      expect(titles.length, explain()).toBeGreaterThan(0);
      expect(new Set(titles)).toEqual(new Set([IMG]));
      expect(Math.max(...timeline.map((s) => s.injected))).toBe(0);
      expect(watch.dialogs).toEqual([]);

      // The identifier links to the issue's page; its JSON document stays under /api/v1.
      const href = await page
        .locator('table[data-testid="runs"] tr[data-issue="E-1"] [data-field="identifier"] a')
        .getAttribute('href');
      expect(href).toBe('/issues/E-1');
      const issue = await page.evaluate(async () => (await fetch('/api/v1/issues/E-1')).json());
      expect(issue).toMatchObject({ issue_identifier: 'E-1' });

      expect(timeline.every((s) => s.connection === 'live' || s.connection === 'connecting')).toBe(true);
      expect(last.connection).toBe('live');
      expect(watch.foreignRequests()).toEqual([]);
      expect(watch.consoleErrors, 'no CSP violation or script error').toEqual([]);
      expect(watch.pageErrors).toEqual([]);

      await page.close();
      const stopped = await live.stop(30_000);
      service = null;
      expect(stopped, live.tail()).toMatchObject({ code: 0, killed: false });
    } finally {
      await browser?.close();
      browser = null;
      if (service !== null) await service.stop(10_000);
    }
  });
});

/** E-1's token figures in the running table, in the order sampled. */
function e1Tokens(timeline: readonly Sample[]): number[] {
  return timeline.flatMap((s) =>
    s.running.filter((r) => r.issue === 'E-1' && r.tokens !== null).map((r) => r.tokens as number),
  );
}
