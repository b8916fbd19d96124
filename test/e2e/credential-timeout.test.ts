/**
 * `orchestrator run` with a runtime that is slow to answer at all (1.5 s before its first
 * line) under `agent.turn_timeout_ms: 1000`. The credential check before the first turn has
 * its own limit, so it passes; the working turn is held to turn_timeout_ms and times out, and
 * that is retried. Before the check had its own limit it was cut at turn_timeout_ms, read as a
 * cancellation, and the issue was released and held instead of retried.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../internal-contracts/agent/fake-runtime.js';
import {
  createProject,
  dbRuns,
  dbTurns,
  makeIssue,
  RetryWatcher,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

/** The mock stream a fast answer would be, written only after a slow start. */
const SLOW_ANSWER = [
  { sleepMs: 1_500 },
  { stdout: JSON.stringify({ type: 'start', session_id: 'slow-1', model: 'mock-model' }) },
  { stdout: JSON.stringify({ type: 'result', status: 'success', text: 'ready' }) },
];

describe('a credential check slower than turn_timeout_ms', () => {
  it('is not cut off and held as turn_cancelled: the run fails on the working turn as turn_timeout and is retried', {
    timeout: 90_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, 'slow runtime')] });
    const runtime = fakeRuntime(path.join(project.dir, 'fake'), 'slow-agent', { steps: SLOW_ANSWER });
    project.writeWorkflow({
      agent: {
        command: runtime,
        turn_timeout_ms: 1_000,
        read_timeout_ms: 5_000,
        max_retry_backoff_ms: 60_000,
      },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    const service = startService(project);
    try {
      await waitFor('the first run of E-1 to end', () => dbRuns(project.dbPath, 'E-1')[0]?.ended_at, {
        timeoutMs: 60_000,
        explain: () => service.tail(),
      });
      await waitFor('its retry to be queued', () => retries.rows('1').length > 0, {
        timeoutMs: 10_000,
        explain: () => service.tail(),
      });
    } finally {
      retries.stop();
      await service.stop(30_000);
    }

    const [run] = dbRuns(project.dbPath, 'E-1');
    expect(run).toMatchObject({ attempt: 1, exit_kind: 'failed', error_kind: 'turn_timeout', turns: 1 });
    expect(dbTurns(project.dbPath, run!.id)).toMatchObject([
      { turn: 1, exit_reason: 'turn_failed', error_kind: 'turn_timeout' },
    ]);
    expect(retries.rows('1')[0]).toMatchObject({ attempt: 2, reason: 'error' });
    expect(service.logsWith('credential verification failed')).toEqual([]);
    // Two invocations: the credential check (answered) and the working turn (timed out).
    expect(fakeInvocations(runtime).length).toBeGreaterThanOrEqual(2);
  });
});
