/**
 * The dashboard page in a real browser against a fake server this test controls: the same
 * page the service sends, the same Content-Security-Policy, /api/v1/state, /api/v1/runs and
 * an event stream the test pushes to. It pins what the live service test cannot force at
 * will: hostile text in every field, a dropped stream, ticking clocks, formatting.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dashboardPage } from '../../src/server/dashboard.js';
import {
  browserSkipReason,
  launchChromium,
  type PageWatch,
  screenshotPath,
  watchPage,
} from '../support/browser.js';
import { freePort } from '../support/ports.js';

type Json = Record<string, unknown>;

const IMG = '<img src=x onerror=alert(1)>';

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_tokens: cacheRead,
  cache_write_tokens: cacheWrite,
  total_tokens: input + output + cacheRead + cacheWrite,
});

function runningView(identifier: string, over: Json = {}): Json {
  return {
    issue_id: `id-${identifier}`,
    issue_identifier: identifier,
    title: `title of ${identifier}`,
    state: 'In Progress',
    attempt: 1,
    run_id: 7,
    host: 'local',
    session_id: 'mock-1',
    turn: 1,
    started_at: new Date(Date.now() - 5_000).toISOString(),
    elapsed_seconds: 5,
    last_event: 'notification',
    last_event_at: new Date().toISOString(),
    workspace: `/tmp/ws/${identifier}`,
    tokens: tokens(100, 20),
    tokens_by_model: { 'mock-model': tokens(100, 20) },
    cost_usd: null,
    provenance: 'local',
    ...over,
  };
}

function retryView(identifier: string, over: Json = {}): Json {
  return {
    issue_id: `id-${identifier}`,
    issue_identifier: identifier,
    attempt: 2,
    due_at: new Date(Date.now() + 30_000).toISOString(),
    due_in_seconds: 30,
    reason: 'error',
    last_error: 'port_exit: exit 3',
    previous_host: null,
    ...over,
  };
}

function runView(id: number, identifier: string, over: Json = {}): Json {
  return {
    id,
    issue_id: `id-${identifier}`,
    issue_identifier: identifier,
    attempt: 1,
    host: null,
    agent_kind: 'mock',
    session_id: 'mock-1',
    workspace: `/tmp/ws/${identifier}`,
    started_at: new Date(Date.now() - 65_000).toISOString(),
    ended_at: new Date(Date.now() - 2_000).toISOString(),
    exit_kind: 'succeeded',
    error_kind: null,
    error: null,
    turns: 1,
    tokens: tokens(300, 40),
    tokens_by_model: { 'mock-model': tokens(300, 40) },
    cost_usd: 0.0042,
    provenance: 'local',
    unaccounted_turns: 0,
    ...over,
  };
}

function waitingView(identifier: string, over: Json = {}): Json {
  return {
    issue_id: `id-${identifier}`,
    issue_identifier: identifier,
    title: `title of ${identifier}`,
    state: 'Todo',
    reason: 'no_slot',
    detail: 'all 4 agent slots in use',
    blocked_by: [],
    seen_at: new Date().toISOString(),
    ...over,
  };
}

function stateView(over: Json = {}): Json {
  const running = (over.running as Json[] | undefined) ?? [];
  const retrying = (over.retrying as Json[] | undefined) ?? [];
  const waiting = (over.waiting as Json[] | undefined) ?? [];
  return {
    generated_at: new Date().toISOString(),
    version: '0.1.0',
    uptime_seconds: 42,
    ready: true,
    draining: false,
    counts: { running: running.length, retrying: retrying.length, waiting: waiting.length },
    slots: { max: 4, available: 4 - running.length },
    running,
    retrying,
    held: [],
    waiting,
    ssh_hosts: [],
    totals: {
      dispatches_since_start: 3,
      runs_started: 3,
      runs_finished: 2,
      seconds_running: 75,
      tokens: tokens(1_234_567, 2_000, 300, 0),
      cost_usd: 12.5,
      known_cost_usd: 12.5,
      unpriced_runs: 0,
      active_tokens: tokens(100, 20),
      active_cost_usd: null,
    },
    tokens_by_model_since_start: { 'mock-model': tokens(1_234_567, 2_000, 300, 0) },
    config: {
      workflow_path: '/srv/project/WORKFLOW.md',
      tracker: {
        kind: 'file',
        active_states: ['Todo', 'In Progress'],
        terminal_states: ['Done'],
        in_progress_state: 'In Progress',
        handoff_state: 'Review',
        blocked_state: null,
      },
      agent: {
        kind: 'mock',
        max_concurrent_agents: 4,
        max_concurrent_agents_by_state: {},
        max_turns: 3,
        max_sessions: 0,
        max_tokens: 50_000,
        max_cost_usd: 0,
        turn_timeout_ms: 120_000,
        stall_timeout_ms: 20_000,
      },
      polling_interval_ms: 200,
      workspace_root: '/srv/project/workspaces',
      db_path: '/srv/project/state.db',
      server: { host: '127.0.0.1', port: 7678 },
    },
    adapters: [{ kind: 'mock', runnable: true, version: null, health: 'builtin', detail: 'built in' }],
    ...over,
  };
}

// ---------------------------------------------------------------- the fake server

interface FakeServer {
  origin: string;
  state: Json;
  runs: Json[];
  /** While false, /api/v1/events answers 503 (the browser stops retrying on its own). */
  streamAvailable: boolean;
  /** Sends an event to every open stream; `state`/`runs` events also become what the GETs return. */
  push(event: 'state' | 'runs', data: Json): void;
  /** Ends every open stream from the server side. */
  dropStreams(): void;
  openStreams(): number;
  close(): Promise<void>;
}

async function startFakeServer(options: { csp: boolean }): Promise<FakeServer> {
  const streams = new Set<http.ServerResponse>();
  const fake: FakeServer = {
    origin: '',
    state: stateView(),
    runs: [],
    streamAvailable: true,
    push(event, data) {
      if (event === 'state') fake.state = data;
      else fake.runs = data.runs as Json[];
      for (const res of streams) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    dropStreams() {
      for (const res of streams) res.end();
      streams.clear();
    },
    openStreams: () => streams.size,
    close: () =>
      new Promise<void>((resolve) => {
        fake.dropStreams();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const json = (res: http.ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (url.pathname === '/') {
      const nonce = randomBytes(16).toString('base64');
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'text/html; charset=utf-8' };
      if (options.csp)
        headers['content-security-policy'] =
          `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:`;
      res.writeHead(200, headers);
      res.end(dashboardPage(nonce));
    } else if (url.pathname === '/api/v1/state') {
      json(res, fake.state);
    } else if (url.pathname === '/api/v1/runs') {
      json(res, { runs: fake.runs });
    } else if (url.pathname === '/api/v1/events') {
      if (!fake.streamAvailable) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('draining');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write('retry: 200\n\n');
      streams.add(res);
      res.on('close', () => streams.delete(res));
    } else {
      res.writeHead(404).end();
    }
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  fake.origin = `http://127.0.0.1:${port}`;
  return fake;
}

// ---------------------------------------------------------------- page readers

interface CellView {
  text: string;
  value: string | null;
  html: string;
}

/** The cell `field` of the row whose data-issue is `issue` (compared as a string, no selector escaping). */
function cell(page: Page, table: string, issue: string, field: string): Promise<CellView | null> {
  return page.evaluate(
    ([t, i, f]) => {
      const rows = Array.from(document.querySelectorAll(`table[data-testid="${t}"] tbody tr`));
      const row = rows.find((r) => r.getAttribute('data-issue') === i);
      const td = row?.querySelector(`[data-field="${f}"]`);
      return td
        ? { text: td.textContent ?? '', value: td.getAttribute('data-value'), html: td.innerHTML }
        : null;
    },
    [table, issue, field] as const,
  );
}

/** The data-issue of every row of a table, in order. */
function rowIssues(page: Page, table: string): Promise<string[]> {
  return page.evaluate(
    (t) =>
      Array.from(document.querySelectorAll(`table[data-testid="${t}"] tbody tr[data-issue]`)).map(
        (r) => r.getAttribute('data-issue') ?? '',
      ),
    table,
  );
}

const connection = (page: Page) =>
  page.evaluate(() => document.querySelector('[data-testid="connection"]')?.getAttribute('data-status'));

const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 10_000, interval: 50 });

// ---------------------------------------------------------------- static checks

describe('dashboard page source', () => {
  it('has one nonce-bearing script, no inline handlers and no external URL (so the CSP can stay strict)', () => {
    const html = dashboardPage('n0nce');
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(html).toContain('<script nonce="n0nce">');
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\binnerHTML\b|\bouterHTML\b|insertAdjacentHTML|document\.write/);
    expect(html.slice(html.indexOf('<script'))).not.toMatch(/<\/script>[\s\S]*<\/script>/);
  });

  it('a nonce cannot break out of its attribute', () => {
    const html = dashboardPage('"><img src=x>');
    expect(html).not.toContain('<img');
    expect(html).toContain('nonce="&quot;&gt;&lt;img src=x&gt;"');
  });

  it('a queued retry is headed as the next attempt, so it never reads as the number of a finished run', () => {
    const html = dashboardPage('n');
    const retryTable = html.slice(html.indexOf('data-testid="retrying"'));
    expect(retryTable.slice(0, retryTable.indexOf('</thead>'))).toContain(
      '<th class="num">Next attempt</th>',
    );
  });
});

// ---------------------------------------------------------------- in the browser

const skip = browserSkipReason();
if (skip !== null) process.stderr.write(`dashboard browser tests: ${skip}\n`);

describe.skipIf(skip !== null)('dashboard in chromium against a fake server', () => {
  let browser: Browser | null = null;
  let fake: FakeServer | null = null;

  beforeEach(async () => {
    browser = await launchChromium();
  });

  afterEach(async () => {
    await browser?.close();
    browser = null;
    await fake?.close();
    fake = null;
  });

  async function open(options: {
    csp: boolean;
  }): Promise<{ page: Page; watch: PageWatch; fake: FakeServer }> {
    fake = await startFakeServer(options);
    const page = await browser!.newPage();
    const watch = watchPage(page, fake.origin);
    await page.goto(`${fake.origin}/`);
    return { page, watch, fake };
  }

  it('issue and agent text renders as text: an `<img onerror>` title creates no element and fires no dialog (even without the CSP)', {
    timeout: 60_000,
  }, async () => {
    const server = await startFakeServer({ csp: false });
    fake = server;
    server.state = stateView({
      running: [
        runningView('A-1', { title: IMG, last_event: '<script>alert(2)</script>', state: '<b>Todo</b>' }),
        runningView(IMG, { issue_id: 'id-evil', title: 'evil identifier' }),
      ],
      retrying: [retryView('R-1', { reason: '<i>error</i>', last_error: '<svg onload=alert(3)>' })],
      waiting: [
        waitingView('W-1', { title: IMG, state: '<b>Todo</b>', detail: `held: ${IMG}`, reason: 'held' }),
        waitingView('W-2', {
          reason: 'blocked',
          detail: 'waiting on <u>DEMO-1</u>',
          blocked_by: ['<u>DEMO-1</u>'],
        }),
      ],
      tokens_by_model_since_start: { '<img src=y onerror=alert(5)>': tokens(1, 1) },
      adapters: [
        {
          kind: 'mock',
          runnable: true,
          version: '<u>1</u>',
          health: 'ok',
          detail: '<iframe src=x></iframe>',
        },
      ],
    });
    server.runs = [
      runView(1, 'D-1', { exit_kind: 'failed', error_kind: 'port_exit', error: `${IMG} exit 3` }),
    ];
    const page = await browser!.newPage();
    const watch = watchPage(page, server.origin);
    await page.goto(`${server.origin}/`);

    await poll(() => rowIssues(page, 'running')).toEqual(['A-1', IMG]);
    const title = await cell(page, 'running', 'A-1', 'title');
    expect(title?.text).toBe(IMG);
    expect(title?.html).toBe('&lt;img src=x onerror=alert(1)&gt;');
    expect((await cell(page, 'running', 'A-1', 'last_event'))?.text).toBe('<script>alert(2)</script>');
    expect((await cell(page, 'running', 'A-1', 'state'))?.text).toBe('<b>Todo</b>');
    expect((await cell(page, 'running', IMG, 'identifier'))?.text).toBe(IMG);
    expect((await cell(page, 'retrying', 'R-1', 'last_error'))?.text).toBe('<svg onload=alert(3)>');
    await poll(() => rowIssues(page, 'waiting')).toEqual(['W-1', 'W-2']);
    expect(await cell(page, 'waiting', 'W-1', 'title')).toMatchObject({
      text: IMG,
      html: '&lt;img src=x onerror=alert(1)&gt;',
    });
    expect((await cell(page, 'waiting', 'W-1', 'state'))?.text).toBe('<b>Todo</b>');
    expect((await cell(page, 'waiting', 'W-1', 'why'))?.text).toBe(`held: ${IMG}`);
    expect((await cell(page, 'waiting', 'W-2', 'why'))?.text).toBe('waiting on <u>DEMO-1</u>');
    await poll(() => cell(page, 'runs', 'D-1', 'error').then((c) => c?.text)).toBe(
      `port_exit: ${IMG} exit 3`,
    );

    const link = await page.evaluate((identifier) => {
      const row = Array.from(document.querySelectorAll('table[data-testid="running"] tbody tr')).find(
        (r) => r.getAttribute('data-issue') === identifier,
      );
      return row?.querySelector('a')?.getAttribute('href');
    }, IMG);
    expect(link).toBe(`/issues/${encodeURIComponent(IMG)}`);

    const elements = await page.evaluate(() => ({
      img: document.querySelectorAll('img').length,
      svg: document.querySelectorAll('svg').length,
      iframe: document.querySelectorAll('iframe').length,
      script: document.querySelectorAll('script').length,
      markupInMain: document.querySelectorAll('main b, main i, main u').length,
      pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
    }));
    expect(elements).toEqual({ img: 0, svg: 0, iframe: 0, script: 1, markupInMain: 0, pwned: null });
    await page.waitForTimeout(300); // let an `onerror` that slipped through have its chance
    expect(watch.dialogs).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    expect(watch.foreignRequests()).toEqual([]);
  });

  it('rows follow the event stream: a session appears, its tokens rise, it leaves and its run shows the outcome', {
    timeout: 60_000,
  }, async () => {
    const { page, watch, fake: server } = await open({ csp: true });
    await poll(() => connection(page)).toBe('live');
    await poll(() => server.openStreams()).toBe(1);
    expect(await rowIssues(page, 'running')).toEqual([]);

    server.push('state', stateView({ running: [runningView('E-1', { tokens: tokens(100, 20) })] }));
    await poll(() => rowIssues(page, 'running')).toEqual(['E-1']);
    expect(await cell(page, 'running', 'E-1', 'tokens')).toMatchObject({ text: '120', value: '120' });

    server.push(
      'state',
      stateView({ running: [runningView('E-1', { tokens: tokens(2_000, 500), turn: 2 })] }),
    );
    await poll(() => cell(page, 'running', 'E-1', 'tokens').then((c) => c?.value)).toBe('2500');
    expect((await cell(page, 'running', 'E-1', 'tokens'))?.text).toBe('2,500');
    expect((await cell(page, 'running', 'E-1', 'turn'))?.value).toBe('2');

    server.push('state', stateView({ retrying: [retryView('E-2')] }));
    server.push('runs', {
      runs: [runView(9, 'E-1', { exit_kind: 'succeeded', tokens: tokens(2_000, 600), cost_usd: 0.25 })],
    });
    await poll(() => rowIssues(page, 'running')).toEqual([]);
    await poll(() => rowIssues(page, 'retrying')).toEqual(['E-2']);
    await poll(() => rowIssues(page, 'runs')).toEqual(['E-1']);
    expect(await cell(page, 'runs', 'E-1', 'outcome')).toMatchObject({
      text: 'succeeded',
      value: 'succeeded',
    });
    expect(await cell(page, 'runs', 'E-1', 'tokens')).toMatchObject({ text: '2,600', value: '2600' });
    expect((await cell(page, 'runs', 'E-1', 'cost'))?.text).toBe('$0.25');
    expect((await cell(page, 'runs', 'E-1', 'duration'))?.text).toBe('1m 03s');

    // A run that just started is not pushed (runs are pushed when one ends): the page reads the
    // history again when a running entry's run is missing, and shows the entry's live figures.
    server.runs = [runView(10, 'E-3', { ended_at: null, exit_kind: null, tokens: tokens(0, 0) })];
    server.push('state', stateView({ running: [runningView('E-3', { run_id: 10, tokens: tokens(70, 7) })] }));
    await poll(() => cell(page, 'runs', 'E-3', 'tokens').then((c) => c?.value)).toBe('77');
    expect((await cell(page, 'runs', 'E-3', 'outcome'))?.text).toBe('running');

    // A held issue is listed with the other issues not running; its full error is the cell's title.
    expect(await rowIssues(page, 'waiting')).toEqual([]);
    server.push(
      'state',
      stateView({
        held: [
          {
            issue_id: 'id-E-4',
            issue_identifier: 'E-4',
            error: `agent_not_found: ${IMG}`,
            error_kind: 'agent_not_found',
            released_by: 'issue_or_workflow_change',
          },
        ],
        waiting: [waitingView('E-4', { reason: 'held', detail: 'held: agent_not_found' })],
      }),
    );
    await poll(() => rowIssues(page, 'waiting')).toEqual(['E-4']);
    expect(await cell(page, 'waiting', 'E-4', 'why')).toMatchObject({
      text: 'held: agent_not_found',
      value: 'held',
    });
    expect(
      await page
        .locator('table[data-testid="waiting"] tr[data-issue="E-4"] [data-field="why"]')
        .getAttribute('title'),
    ).toBe(`agent_not_found: ${IMG} · dispatched again after an issue edit or a WORKFLOW.md change`);

    // SSH hosts: hidden without hosts, one row per host with its state.
    expect(await page.locator('[data-testid="hosts"]').isVisible()).toBe(false);
    server.push(
      'state',
      stateView({
        ssh_hosts: [
          { host: 'ci@build-1:2222', running: 1, cap: 2, down: null, configured: true },
          {
            host: 'build-2',
            running: 0,
            cap: 2,
            down: { reason: `connect refused ${IMG}`, retry_at: '2030-01-01T00:00:00.000Z' },
            configured: true,
          },
        ],
      }),
    );
    const hostCells = () =>
      page.evaluate(
        (tail) =>
          Array.from(document.querySelectorAll('table[data-testid="hosts"] tbody tr[data-host]')).map((r) => [
            r.getAttribute('data-host'),
            r.querySelector('[data-field="running"]')?.textContent,
            r.querySelector('[data-field="state"]')?.getAttribute('data-value'),
            r.querySelector('[data-field="state"]')?.textContent?.endsWith(tail),
          ]),
        `connect refused ${IMG}`,
      );
    await poll(hostCells).toEqual([
      ['ci@build-1:2222', '1', 'up', false],
      ['build-2', '0', 'down', true],
    ]);
    expect(await page.locator('[data-testid="hosts"]').isVisible()).toBe(true);

    server.push('state', stateView());
    await poll(() => rowIssues(page, 'retrying')).toEqual([]);
    await poll(() => rowIssues(page, 'waiting')).toEqual([]);
    await poll(hostCells).toEqual([]);
    expect(await page.locator('table[data-testid="running"] tr.empty').textContent()).toBe(
      'No sessions running',
    );

    await page.screenshot({ path: screenshotPath('fake-server-stream'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: screenshotPath('fake-server-stream-dark'), fullPage: true });
    expect(watch.consoleErrors).toEqual([]); // a CSP violation would be reported here
    expect(watch.pageErrors).toEqual([]);
    expect(watch.foreignRequests()).toEqual([]);
    expect(watch.requests.length).toBeGreaterThan(0);
  });

  it('elapsed time and due-in tick between events', { timeout: 60_000 }, async () => {
    const { page, fake: server } = await open({ csp: true });
    await poll(() => connection(page)).toBe('live');
    server.push(
      'state',
      stateView({
        running: [runningView('E-1', { elapsed_seconds: 10 })],
        retrying: [retryView('E-2', { due_in_seconds: 30 })],
      }),
    );
    await poll(() => cell(page, 'running', 'E-1', 'elapsed').then((c) => c?.value)).toBe('10');
    await poll(() =>
      cell(page, 'running', 'E-1', 'elapsed').then((c) => Number(c?.value)),
    ).toBeGreaterThanOrEqual(12);
    expect(Number((await cell(page, 'retrying', 'E-2', 'due_in'))?.value)).toBeLessThanOrEqual(28);
    expect((await cell(page, 'running', 'E-1', 'elapsed'))?.text).toMatch(/^1\ds$/);
  });

  it('the indicator shows reconnecting while the stream is down, then live, and the page reloads what it missed', {
    timeout: 60_000,
  }, async () => {
    const { page, watch, fake: server } = await open({ csp: true });
    await poll(() => connection(page)).toBe('live');
    server.streamAvailable = false;
    server.dropStreams();
    await poll(() => connection(page)).toBe('reconnecting');
    expect(await page.locator('[data-testid="connection"]').textContent()).toBe('reconnecting');
    // Changed while the stream was down, and never pushed: only a reload can show it.
    server.state = stateView({ running: [runningView('E-7')] });
    server.runs = [runView(3, 'E-6')];
    server.streamAvailable = true;
    await poll(() => connection(page)).toBe('live');
    await poll(() => rowIssues(page, 'running')).toEqual(['E-7']);
    await poll(() => rowIssues(page, 'runs')).toEqual(['E-6']);
    expect(watch.pageErrors).toEqual([]);
  });

  it('totals, money, per-model tokens, config and adapters are shown, and recent runs are the newest 25', {
    timeout: 60_000,
  }, async () => {
    const server = await startFakeServer({ csp: true });
    fake = server;
    server.state = stateView({
      draining: true,
      totals: {
        ...(stateView().totals as Json),
        cost_usd: 0.0042,
        active_cost_usd: 1.5,
      },
      tokens_by_model_since_start: { 'model-b': tokens(10, 5), 'model-a': tokens(1_000, 50, 7, 3) },
      adapters: [
        { kind: 'mock', runnable: true, version: null, health: 'builtin', detail: 'built in' },
        { kind: 'codex', runnable: false, version: null, health: 'missing', detail: 'codex not on PATH' },
      ],
    });
    server.runs = Array.from({ length: 30 }, (_, i) =>
      runView(i + 1, `H-${i + 1}`, { started_at: new Date(Date.now() - (100 - i) * 1_000).toISOString() }),
    );
    const page = await browser!.newPage();
    await page.goto(`${server.origin}/`);

    const totals = page.locator('[data-testid="totals"]');
    await poll(() => totals.locator('[data-field="input_tokens"]').textContent()).toBe('1,234,567');
    expect(await totals.locator('[data-field="input_tokens"]').getAttribute('data-value')).toBe('1234567');
    expect(await totals.locator('[data-field="cost_usd"]').textContent()).toBe('$0.0042');
    expect(await totals.locator('[data-field="active_cost_usd"]').textContent()).toBe(
      '+$1.50 in running sessions',
    );
    expect(await totals.locator('[data-field="runs"]').textContent()).toBe('2 / 3');
    expect(await page.locator('#draining').isVisible()).toBe(true);
    expect(await page.locator('#version').textContent()).toBe('0.1.0');
    expect(await page.locator('#slots').textContent()).toBe('4 free of 4');

    const models = await page.evaluate(() =>
      Array.from(document.querySelectorAll('table[data-testid="models"] tbody tr')).map((r) => [
        r.getAttribute('data-model'),
        r.querySelector('[data-field="total_tokens"]')?.getAttribute('data-value'),
      ]),
    );
    expect(models).toEqual([
      ['model-a', '1060'],
      ['model-b', '15'],
    ]);

    const config = page.locator('[data-testid="config"]');
    expect(await config.locator('dd[data-field="tracker.active_states"]').textContent()).toBe(
      'Todo, In Progress',
    );
    expect(await config.locator('dd[data-field="agent.max_turns"]').textContent()).toBe('3');
    expect(await config.locator('dd[data-field="agent.max_cost_usd"]').textContent()).toBe('0 (unlimited)');
    expect(await config.locator('dd[data-field="agent.max_tokens"]').textContent()).toBe('50000');
    expect(await config.locator('dd[data-field="agent.turn_timeout_ms"]').textContent()).toBe(
      '120,000 ms (2m 00s)',
    );
    expect(await config.locator('dd[data-field="agent.max_concurrent_agents_by_state"]').textContent()).toBe(
      '—',
    );
    expect(await config.locator('dd[data-field="server.port"]').textContent()).toBe('7678');

    const health = await page.evaluate(() =>
      Array.from(document.querySelectorAll('table[data-testid="adapters"] tbody tr')).map((r) => [
        r.getAttribute('data-kind'),
        r.querySelector('[data-field="health"]')?.textContent,
        r.querySelector('[data-field="runnable"]')?.textContent,
      ]),
    );
    expect(health).toEqual([
      ['mock', 'builtin', 'yes'],
      ['codex', 'missing', 'no'],
    ]);

    await poll(() => rowIssues(page, 'runs').then((r) => r.length)).toBe(25);
    const shown = await rowIssues(page, 'runs');
    expect(shown[0]).toBe('H-30');
    expect(shown[24]).toBe('H-6');
    expect((await cell(page, 'runs', 'H-30', 'cost'))?.text).toBe('$0.0042');
  });

  it('lists every issue known and not running with why (blocked, budget-stopped, held, parked), each linking to its page; unknown cost reads "—", never $0.00', {
    timeout: 60_000,
  }, async () => {
    const server = await startFakeServer({ csp: true });
    fake = server;
    const waiting = [
      waitingView('DEMO-6', { reason: 'blocked', detail: 'waiting on DEMO-1', blocked_by: ['DEMO-1'] }),
      waitingView('DEMO-5', { reason: 'budget_exhausted', detail: 'token budget 60,000 of 50,000' }),
      waitingView('DEMO-9', { reason: 'held', detail: 'held: agent_not_found' }),
      waitingView('..', { issue_id: 'id-dots', reason: 'no_slot', detail: 'all 4 agent slots in use' }),
      waitingView('DEMO-3', {
        state: 'Blocked',
        reason: 'parked',
        detail: 'waiting for an answer in Blocked: Which date should the release go out on?',
      }),
    ];
    server.state = stateView({
      waiting,
      counts: { running: 1, retrying: 0, waiting: 6 },
      running: [runningView('DEMO-2', { cost_usd: null })],
      totals: {
        ...(stateView().totals as Json),
        cost_usd: null,
        known_cost_usd: 0,
        unpriced_runs: 3,
        active_cost_usd: null,
      },
    });
    server.runs = [runView(4, 'DEMO-1', { cost_usd: null }), runView(5, 'DEMO-8', { cost_usd: 0 })];
    const page = await browser!.newPage();
    const watch = watchPage(page, server.origin);
    await page.goto(`${server.origin}/`);

    await poll(() => rowIssues(page, 'waiting')).toEqual(['DEMO-6', 'DEMO-5', 'DEMO-9', '..', 'DEMO-3']);
    const why = (issue: string) => cell(page, 'waiting', issue, 'why');
    expect(await why('DEMO-6')).toMatchObject({ text: 'waiting on DEMO-1', value: 'blocked' });
    expect(await why('DEMO-5')).toMatchObject({
      text: 'token budget 60,000 of 50,000',
      value: 'budget_exhausted',
    });
    expect(await why('DEMO-9')).toMatchObject({ text: 'held: agent_not_found', value: 'held' });
    expect(await why('DEMO-3')).toMatchObject({
      text: 'waiting for an answer in Blocked: Which date should the release go out on?',
      value: 'parked',
    });
    expect((await cell(page, 'waiting', 'DEMO-3', 'state'))?.text).toBe('Blocked');
    expect(await page.locator('#waiting-count').textContent()).toBe('5 of 6');
    expect(await page.locator('#count-waiting').textContent()).toBe('6');
    const href = (issue: string) =>
      page.evaluate((i) => {
        const rows = Array.from(document.querySelectorAll('table[data-testid="waiting"] tbody tr'));
        return rows
          .find((r) => r.getAttribute('data-issue') === i)
          ?.querySelector('a')
          ?.getAttribute('href');
      }, issue);
    expect(await href('DEMO-6')).toBe('/issues/DEMO-6');
    expect(await href('..')).toBe('/issues?identifier=..');

    // Unknown money: the total, a running session and a finished run all read "—"; a known $0 stays $0.00.
    const totals = page.locator('[data-testid="totals"]');
    expect(await totals.locator('[data-field="cost_usd"]').textContent()).toBe('—');
    expect(await totals.locator('[data-field="cost_note"]').textContent()).toBe(
      '3 runs without a known cost',
    );
    expect((await cell(page, 'running', 'DEMO-2', 'cost'))?.text).toBe('—');
    await poll(() => cell(page, 'runs', 'DEMO-1', 'cost').then((c) => c?.text)).toBe('—');
    expect((await cell(page, 'runs', 'DEMO-8', 'cost'))?.text).toBe('$0.00');
    expect(await page.locator('main').textContent()).not.toContain('$0.00 in running sessions');

    // Some runs priced, one not: the total is still unknown, and the note says what is known.
    server.push(
      'state',
      stateView({
        totals: { ...(stateView().totals as Json), cost_usd: null, known_cost_usd: 1.5, unpriced_runs: 1 },
      }),
    );
    await poll(() => totals.locator('[data-field="cost_note"]').textContent()).toBe(
      '1 run without a known cost ($1.50 known)',
    );
    expect(await totals.locator('[data-field="cost_usd"]').textContent()).toBe('—');
    await poll(() => rowIssues(page, 'waiting')).toEqual([]);
    expect(await page.locator('table[data-testid="waiting"] tr.empty').textContent()).toBe(
      'Every issue known is running or queued',
    );
    await page.screenshot({ path: screenshotPath('fake-server-waiting'), fullPage: true });
    expect(watch.pageErrors).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });

  it('rate limits: the section stays hidden until a limit reports a window, shows one row per window with its text as text, and hides again when none is left', {
    timeout: 60_000,
  }, async () => {
    const { page, watch, fake: server } = await open({ csp: true });
    await poll(() => connection(page)).toBe('live');
    const section = page.locator('#rate-limits-section');
    expect(await section.isVisible()).toBe(false);

    // A limit without windows (what the recorded wires carry) shows nothing either.
    const observed = new Date().toISOString();
    server.push(
      'state',
      stateView({
        rate_limits: [{ agent_kind: 'mock', limit_id: 'empty', observed_at: observed, windows: [] }],
      }),
    );
    await poll(() => page.locator('#generated-at').getAttribute('data-value')).toBe(
      server.state.generated_at,
    );
    expect(await section.isVisible()).toBe(false);

    const resetsAt = new Date(Date.now() + 2 * 3_600_000).toISOString();
    server.push(
      'state',
      stateView({
        rate_limits: [
          {
            agent_kind: 'mock',
            limit_id: IMG,
            observed_at: observed,
            windows: [
              { window: 'primary', used_percent: 100, window_minutes: 300, resets_at: resetsAt },
              { window: '<b>weekly</b>', used_percent: null, window_minutes: null, resets_at: null },
            ],
          },
        ],
      }),
    );
    await poll(() => section.isVisible()).toBe(true);
    const rows = await page.evaluate(() =>
      Array.from(document.querySelectorAll('table[data-testid="rate-limits"] tbody tr')).map((r) =>
        ['agent_kind', 'limit', 'window', 'used', 'resets'].map((f) => {
          const td = r.querySelector(`[data-field="${f}"]`);
          return [td?.textContent ?? null, td?.className ?? null];
        }),
      ),
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]?.slice(0, 4)).toEqual([
      ['mock', ''],
      [IMG, ''],
      ['primary (5h 00m 00s)', ''],
      ['100%', 'num bad'],
    ]);
    // A reset past midnight (local time) shows its date too.
    expect(rows[0]?.[4]?.[0]).toMatch(/^in [12]h \d\dm \d\ds \((\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d\)$/);
    expect(rows[1]?.slice(2)).toEqual([
      ['<b>weekly</b>', ''],
      ['—', 'num muted'],
      ['—', ''],
    ]);
    expect(
      await page.locator('table[data-testid="rate-limits"] img, table[data-testid="rate-limits"] b').count(),
    ).toBe(0);

    server.push('state', stateView({ rate_limits: [] }));
    await poll(() => section.isVisible()).toBe(false);
    expect(watch.pageErrors).toEqual([]);
  });
});
