/**
 * The exposition checked by Prometheus's own linter, `promtool check metrics` (Debian package
 * `prometheus`): it parses the text format and applies the naming rules (counters end in
 * _total and nothing else does, help on every metric, base units). The scrape is taken after
 * every kind of observation, so each metric family has samples, including label values that
 * need escaping. Skipped only on a developer machine without the package; in CI it must run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Issue } from '../../src/domain/issue.js';
import { instrumentTracker } from '../../src/observability/instrument-tracker.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { OrchestratorSnapshot } from '../../src/orchestrator/orchestrator.js';

const PROMTOOL = '/usr/bin/promtool';
const MISSING = !existsSync(PROMTOOL) && process.env.CI === undefined;
if (MISSING) console.warn(`skipping promtool checks: ${PROMTOOL} is absent (apt-get install prometheus)`);

const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0 };
const ISSUE = { id: '1', identifier: 'P-1', state: 'Todo' } as Issue;

function snapshot(): OrchestratorSnapshot {
  return {
    running: [
      {
        issue: ISSUE,
        attempt: 1,
        runId: 1,
        host: 'worker-a',
        startedAtMs: Date.now() - 1_500,
        lastEventAtMs: Date.now(),
        lastEvent: 'dispatched',
        turn: 0,
        sessionId: null,
        workspace: null,
        usage: { ...ZERO },
        usageByModel: {},
        provenance: null,
        costMicroUsd: null,
        controller: new AbortController(),
        cancelReason: null,
        done: Promise.resolve(),
        toolToken: null,
        question: null,
        spendBefore: null,
      },
    ],
    retries: [],
    held: [],
    hosts: [],
    store: { available: true, sinceMs: null, pendingWrites: 0, lastError: null },
    ticks: 3,
    draining: false,
    totals: { dispatches: 1, tokens: { ...ZERO }, costMicroUsd: 0 },
    maxConcurrentAgents: 4,
    waiting: [],
    rateLimits: [
      {
        kind: 'mock',
        limitId: 'account',
        windows: [
          { window: 'primary', usedPercent: 42.5, windowMinutes: 300, resetsAtMs: Date.now() + 3_600_000 },
          { window: 'secondary', usedPercent: null, windowMinutes: null, resetsAtMs: null },
        ],
        observedAtMs: Date.now(),
      },
    ],
  };
}

function promtool(exposition: string): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], {
    input: exposition,
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe.skipIf(MISSING)('promtool check metrics', () => {
  it('the exposition of a busy service passes with no lint findings (no gauge named _total, help everywhere)', async () => {
    const metrics = createMetrics({ version: '0.1.0', snapshot });
    const at = new Date().toISOString();
    metrics.observe({ type: 'tick', result: 'success', durationMs: 40, candidates: 2 });
    metrics.observe({ type: 'dispatched', issue: ISSUE, attempt: 1, host: 'worker-a' });
    metrics.observe({ type: 'transition', purpose: 'in_progress', result: 'success' });
    metrics.observe({
      type: 'tokens',
      model: 'claude "quoted" \\ back\nslash',
      delta: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1, totalTokens: 15 },
    });
    metrics.observe({
      type: 'agent_event',
      issue: ISSUE,
      event: {
        type: 'tool_result',
        at,
        agentPid: '1',
        toolName: 'Bash',
        toolKind: 'shell',
        toolArgument: null,
        toolDurationMs: 3,
        toolError: false,
      },
    });
    metrics.observe({ type: 'turn', issueId: '1', turn: 1 });
    metrics.observe({
      type: 'worker_exited',
      issue: ISSUE,
      exitKind: 'succeeded',
      durationMs: 2_000,
      host: 'worker-a',
      costMicroUsd: 12_345,
    });
    metrics.observe({ type: 'retry_scheduled', issueId: '1', trigger: 'continuation', dueAtMs: 0 });
    metrics.observe({ type: 'budget_exhausted', issueId: '1', limit: 'max_tokens' });
    const tracker = instrumentTracker(
      {
        fetchCandidateIssues: async () => [],
        fetchIssueById: async () => {
          throw new Error('gone');
        },
      } as unknown as Parameters<typeof instrumentTracker>[0],
      metrics.trackerRequest,
    );
    await tracker.fetchCandidateIssues();
    await tracker.fetchIssueById('1').catch(() => undefined);

    const { body } = await metrics.exposition();
    expect(body).toContain('orchestrator_ssh_host_usage{host="worker-a"} 1');
    const result = promtool(body);
    expect(result, result.output).toEqual({ status: 0, output: '' });
  });

  it('a broken exposition is rejected (the check is real, not a no-op)', () => {
    const result = promtool('# TYPE orchestrator_x_total counter\norchestrator_x_total{a="1" 1\n');
    expect(result.status).not.toBe(0);
  });
});
