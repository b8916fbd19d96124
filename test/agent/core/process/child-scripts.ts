/**
 * Small node programs the process tests run as real agents, written to a temp dir
 * at test time and started with `process.execPath`, plus polling helpers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { LineResult } from '../../../../src/agent/core/process/lines.js';
import type { AgentProcess, SpawnAgentProcessParams } from '../../../../src/agent/core/process/spawn.js';

/** A temp dir for scripts and markers; `cleanup` removes it. */
export function makeScratch(): {
  dir: string;
  script(name: string, source: string): string;
  cleanup(): void;
} {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-process-'));
  return {
    dir,
    script(name, source) {
      const file = path.join(dir, name);
      writeFileSync(file, source);
      return file;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A minimal, hermetic environment for a child. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...extra };
}

/** Spawn parameters running `file` with node. */
export function nodeParams(
  file: string,
  cwd: string,
  overrides: Partial<SpawnAgentProcessParams> = {},
): SpawnAgentProcessParams {
  return {
    command: process.execPath,
    args: [file],
    cwd,
    env: childEnv(),
    stdin: 'ignore',
    ...overrides,
  };
}

/** Polls `condition` every 10 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Reads stdout lines until one matches `pattern`; returns its match. */
export async function readUntil(
  iterator: AsyncIterator<LineResult>,
  pattern: RegExp,
): Promise<RegExpMatchArray> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error(`stdout ended before a line matching ${pattern}`);
    if (next.value.type !== 'line') continue;
    const match = next.value.text.match(pattern);
    if (match) return match;
  }
}

/** The stdout iterator of a process (one consumer). */
export function stdoutOf(agent: AgentProcess): AsyncIterator<LineResult> {
  return agent.lines[Symbol.asyncIterator]();
}

/** SIGKILLs pids left by a failed test; missing pids are fine. */
export function killQuietly(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** V8's `gc()`, made callable without `--expose-gc` on the command line. */
function exposeGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/**
 * Tracks the peak of live memory (JS heap plus Buffers, measured right after a
 * full GC) above its level at creation. RSS is not used: it mostly shows how
 * lazily garbage chunks are collected, not what is retained.
 */
export function liveMemoryTracker(): { sample(): void; peakGrowth(): number } {
  const gc = exposeGc();
  const live = () => {
    gc();
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers;
  };
  const before = live();
  let peak = before;
  return {
    sample() {
      peak = Math.max(peak, live());
    },
    peakGrowth() {
      return peak - before;
    },
  };
}

/** Peak live-memory growth while `work` runs, sampled every `intervalMs`. */
export async function peakLiveGrowth(work: () => Promise<void>, intervalMs = 10): Promise<number> {
  const tracker = liveMemoryTracker();
  const sampler = setInterval(() => tracker.sample(), intervalMs);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  tracker.sample();
  return tracker.peakGrowth();
}
