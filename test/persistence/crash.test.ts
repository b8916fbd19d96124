/**
 * Durability against a killed process: a child writes through the real store and SIGKILLs
 * itself the moment the call returns (no close, no checkpoint, no exit handlers), then the
 * parent reopens the file. This is the promise the orchestrator relies on when it moves its
 * in-memory state on right after a store call.
 */
import { spawnSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/persistence/store.js';
import { useTempDirs } from './support.js';

const temp = useTempDirs();
const STORE_MODULE = new URL('../../src/persistence/index.ts', import.meta.url).href;

function runKilledChild(dir: string, body: string): ReturnType<typeof spawnSync> {
  const script = path.join(dir, 'child.mts');
  writeFileSync(
    script,
    `import { openStore } from ${JSON.stringify(STORE_MODULE)};
const store = openStore(process.argv[2]);
${body}
process.kill(process.pid, 'SIGKILL');
`,
  );
  return spawnSync(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), script, path.join(dir, 'state.db')],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
}

describe('durability', () => {
  it('a retry saved right before the process is SIGKILLed is there after reopening', () => {
    const dir = temp.dir();
    const child = runKilledChild(
      dir,
      `store.saveRetry({ issueId: 'issue-42', identifier: 'ENG-42', attempt: 3, dueAtMs: 1700000123456,
  reason: 'error', lastError: 'worker exited: boom', previousHost: 'host-a', sessionId: 'sess-7' });`,
    );
    expect(child.signal, String(child.stderr)).toBe('SIGKILL');
    // The commit lives in the WAL (nothing checkpointed it), so reopening must replay it.
    expect(statSync(path.join(dir, 'state.db-wal')).size).toBeGreaterThan(0);

    const store = temp.track(openStore(path.join(dir, 'state.db')));
    expect(store.loadRetries()).toMatchObject([
      {
        issueId: 'issue-42',
        identifier: 'ENG-42',
        attempt: 3,
        dueAtMs: 1_700_000_123_456,
        reason: 'error',
        lastError: 'worker exited: boom',
        previousHost: 'host-a',
        sessionId: 'sess-7',
      },
    ]);
  });

  it('a run killed mid-flight is found open after restart, keeps its turn, and is closed as interrupted', () => {
    const dir = temp.dir();
    const child = runKilledChild(
      dir,
      `const runId = store.startRun({ issueId: 'i', identifier: 'ENG-1', attempt: 1, host: 'local', agentKind: 'mock',
  workspace: '/w', startedAt: '2025-01-01T00:00:00.000Z' });
const usage = { inputTokens: 40, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 42 };
store.recordTurn(runId, 1, '2025-01-01T00:00:00.000Z', { sessionId: 's', exitReason: 'turn_completed', usage,
  usageByModel: {}, usageMeasured: true, spendUnaccounted: false, spendCoverable: false, coversSession: false,
  usageProvenance: 'local', reportedAmounts: [], finalMessage: '', endedAt: '2025-01-01T00:00:01.000Z',
  errorKind: null, error: null });`,
    );
    expect(child.signal, String(child.stderr)).toBe('SIGKILL');

    const store = temp.track(openStore(path.join(dir, 'state.db')));
    expect(store.openRuns()).toHaveLength(1);
    expect(store.closeInterruptedRuns('2025-01-01T01:00:00.000Z')).toBe(1);
    expect(store.runByIdentifier('ENG-1')).toMatchObject({
      exitKind: 'interrupted',
      turns: 1,
      sessionId: 's',
      usage: { totalTokens: 42 },
    });
    expect(store.turnsForRun(store.runByIdentifier('ENG-1')?.id ?? -1)).toHaveLength(1);
  });
});
