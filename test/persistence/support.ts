/**
 * Shared pieces of the persistence tests: temporary directories that are always removed,
 * and small builders for the records the store takes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { TokenCounts } from '../../src/domain/agent.js';
import type { RetryEntry, StartRunInput, TurnInput } from '../../src/persistence/index.js';
import type { Store } from '../../src/persistence/store.js';

/** A fresh temporary directory per call, removed (with any open stores closed) after each test. */
export function useTempDirs(): { dir(): string; track(store: Store): Store } {
  const dirs: string[] = [];
  const stores: Store[] = [];
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir() {
      const dir = mkdtempSync(path.join(tmpdir(), 'orch-persistence-'));
      dirs.push(dir);
      return dir;
    },
    track(store) {
      stores.push(store);
      return store;
    },
  };
}

export function counts(input: number, output: number, cacheRead = 0, cacheWrite = 0): TokenCounts {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    totalTokens: input + output,
  };
}

export function runInput(overrides: Partial<StartRunInput> = {}): StartRunInput {
  return {
    issueId: 'issue-1',
    identifier: 'ENG-1',
    attempt: 1,
    host: 'local',
    agentKind: 'mock',
    sessionId: null,
    workspace: '/tmp/workspaces/ENG-1',
    startedAt: '2025-01-01T00:00:00.000Z',
    ...overrides,
  };
}

export function turnInput(overrides: Partial<TurnInput> = {}): TurnInput {
  return {
    sessionId: 'sess-1',
    exitReason: 'turn_completed',
    usage: counts(1_000, 200, 300, 50),
    usageByModel: { 'model-a': counts(1_000, 200, 300, 50) },
    usageMeasured: true,
    spendUnaccounted: false,
    spendCoverable: false,
    coversSession: false,
    usageProvenance: 'reported',
    reportedAmounts: [{ unit: 'USD', micros: 12_345 }],
    finalMessage: 'done',
    endedAt: '2025-01-01T00:01:00.000Z',
    errorKind: null,
    error: null,
    ...overrides,
  };
}

export function retryEntry(overrides: Partial<RetryEntry> = {}): RetryEntry {
  return {
    issueId: 'issue-1',
    identifier: 'ENG-1',
    attempt: 2,
    dueAtMs: 1_700_000_000_000,
    reason: 'error',
    lastError: 'worker exited: agent: turn_failed: boom',
    previousHost: 'local',
    sessionId: null,
    reaction: null,
    ...overrides,
  };
}
