/**
 * The demo as `make run` runs it (testdata/issues.example.json under WORKFLOW.example.md with
 * the mock runtime), served by the real `orchestrator run --port N` and watched in Debian's
 * chromium: the dashboard must list the issues that do not run with why (DEMO-6 waiting on its
 * blocker, DEMO-4 and DEMO-5 stopped by their budgets, DEMO-3 parked with its question), an
 * issue's link must open its HTML page, and money the mock cannot price must read "—".
 *
 * The workflow is read from WORKFLOW.example.md at test time and only its paths are moved into
 * the test's project, so the test follows the demo as it changes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { browserSkipReason, launchChromium, screenshotPath, watchPage } from '../support/browser.js';
import { REPO_ROOT } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import {
  createProject,
  type IssueSpec,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

/** WORKFLOW.example.md's front matter with its paths moved into the project, and its prompt. */
function demoWorkflow(): { config: Record<string, unknown>; prompt: string } {
  const text = readFileSync(path.join(REPO_ROOT, 'WORKFLOW.example.md'), 'utf8');
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (match === null) throw new Error('WORKFLOW.example.md has no front matter');
  const config = parse(match[1] ?? '') as Record<string, unknown>;
  return {
    config: {
      ...config,
      file: { path: 'issues.json' },
      db_path: 'state.db',
      workspace: { root: './workspaces' },
      server: null,
    },
    prompt: match[2] ?? '',
  };
}

interface WaitingRow {
  issue: string;
  reason: string | null;
  why: string;
  state: string;
  href: string | null;
}

function waitingRows(page: Page): Promise<WaitingRow[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('table[data-testid="waiting"] tbody tr[data-issue]')).map((r) => ({
      issue: r.getAttribute('data-issue') ?? '',
      reason: r.querySelector('[data-field="why"]')?.getAttribute('data-value') ?? null,
      why: r.querySelector('[data-field="why"]')?.textContent ?? '',
      state: r.querySelector('[data-field="state"]')?.textContent ?? '',
      href: r.querySelector('[data-field="identifier"] a')?.getAttribute('href') ?? null,
    })),
  );
}

const skip = browserSkipReason();
if (skip !== null) process.stderr.write(`dashboard demo e2e: ${skip}\n`);

describe.skipIf(skip !== null)('the demo on the dashboard', () => {
  let browser: Browser | null = null;

  afterEach(async () => {
    await browser?.close();
    browser = null;
  });

  it('lists the blocked, budget-stopped and parked demo issues with their reasons; an issue link opens its page; unknown cost reads "—"', {
    timeout: 240_000,
  }, async () => {
    const issues = JSON.parse(
      readFileSync(path.join(REPO_ROOT, 'testdata', 'issues.example.json'), 'utf8'),
    ) as IssueSpec[];
    const { config, prompt } = demoWorkflow();
    const project = createProject({ issues, config, prompt });
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

      let rows: WaitingRow[] = [];
      const explain = () => `${live.tail()}\nnot running: ${JSON.stringify(rows, null, 1)}`;
      const row = (issue: string) => rows.find((r) => r.issue === issue);
      await waitFor(
        'DEMO-6 blocked, DEMO-4 and DEMO-5 budget-stopped and DEMO-3 parked on the dashboard',
        async () => {
          rows = await waitingRows(page);
          return (
            row('DEMO-6')?.reason === 'blocked' &&
            row('DEMO-4')?.reason === 'budget_exhausted' &&
            row('DEMO-5')?.reason === 'budget_exhausted' &&
            row('DEMO-3')?.reason === 'parked'
          );
        },
        { timeoutMs: 180_000, intervalMs: 250, explain },
      );
      expect(row('DEMO-6'), explain()).toMatchObject({ why: 'waiting on DEMO-1', state: 'Todo' });
      // A session that stalls on a loaded machine spends the session budget before the token one.
      expect(row('DEMO-5')?.why, explain()).toMatch(
        /^(token budget 60,000 of 50,000|session budget 2 of 2)$/,
      );
      expect(row('DEMO-4')?.why, explain()).toBe('session budget 2 of 2');
      expect(row('DEMO-3'), explain()).toMatchObject({
        why: 'waiting for an answer in Blocked: Which date should the release go out on?',
        state: 'Blocked',
      });
      expect(row('DEMO-7'), 'a Done issue is not a candidate').toBeUndefined();
      await page.screenshot({ path: screenshotPath('demo-not-running'), fullPage: true });

      // The mock prices nothing: the total and the runs read "—", never $0.00.
      const totalCost = page.locator('[data-testid="totals"] [data-field="cost_usd"]');
      await expect.poll(() => totalCost.textContent(), { timeout: 10_000 }).toBe('—');
      const runCosts = await page.evaluate(() =>
        Array.from(document.querySelectorAll('table[data-testid="runs"] tbody tr[data-issue]')).map((r) => [
          r.getAttribute('data-issue'),
          r.querySelector('[data-field="cost"]')?.textContent,
        ]),
      );
      const demo5Costs = runCosts.filter(([issue]) => issue === 'DEMO-5').map(([, cost]) => cost);
      expect(demo5Costs.length, JSON.stringify(runCosts)).toBeGreaterThan(0);
      expect(new Set(demo5Costs)).toEqual(new Set(['—']));
      const state = await page.evaluate(async () => (await fetch('/api/v1/state')).json());
      expect(state.totals.cost_usd).toBeNull();
      expect(state.totals.unpriced_runs).toBeGreaterThan(0);

      // DEMO-5's link opens its HTML page: what it waits on, its runs with the cost unknown, the comments.
      expect(row('DEMO-5')?.href).toBe('/issues/DEMO-5');
      await page
        .locator('table[data-testid="waiting"] tr[data-issue="DEMO-5"] [data-field="identifier"] a')
        .click();
      await page.waitForURL(`${origin}/issues/DEMO-5`);
      expect(await page.locator('[data-testid="identifier"]').textContent()).toBe('DEMO-5');
      expect(await page.locator('[data-testid="title"]').textContent()).toBe('Expensive refactor');
      expect(await page.locator('[data-testid="now"] [data-field="why"]').textContent()).toMatch(/budget/);
      const pageCosts = await page.locator('table[data-testid="runs"] [data-field="cost"]').allTextContents();
      expect(pageCosts.length).toBeGreaterThan(0);
      expect(new Set(pageCosts)).toEqual(new Set(['—']));
      expect(await page.locator('table[data-testid="turns"] tr[data-turn]').count()).toBeGreaterThan(0);
      // The budget comment is written just after the store marks the budget spent, which the
      // page may show first: read the comments again until it is there.
      let lifecycles: (string | null)[] = [];
      let reads = 0;
      await expect
        .poll(
          async () => {
            if (reads++ > 0) await page.reload();
            lifecycles = await page
              .locator('[data-testid="comments"] li')
              .evaluateAll((items) => items.map((li) => li.getAttribute('data-lifecycle')));
            return lifecycles;
          },
          { timeout: 15_000, interval: 250 },
        )
        .toContain('budget');
      expect(lifecycles, explain()).toContain('dispatch');
      await page.screenshot({ path: screenshotPath('demo-issue-page'), fullPage: true });

      // DEMO-6 never ran: its page says what it waits on and links the blocker's page.
      await page.goto(`${origin}/issues/DEMO-6`);
      expect(await page.locator('[data-testid="now"] [data-field="why"]').textContent()).toBe(
        'waiting on DEMO-1',
      );
      await page.locator('[data-testid="now"] [data-field="blocked_by"] a').click();
      await page.waitForURL(`${origin}/issues/DEMO-1`);
      expect(await page.locator('[data-testid="identifier"]').textContent()).toBe('DEMO-1');

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
