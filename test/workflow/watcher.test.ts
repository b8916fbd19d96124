import { mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/domain/diagnostic.js';
import { type LoadResult, loadWorkflow, type Workflow } from '../../src/workflow/load.js';
import {
  type WatchWorkflowOptions,
  type WorkflowWatcher,
  watchWorkflow,
} from '../../src/workflow/watcher.js';

/** A minimal valid workflow; `maxTurns` is written as given so a test can break it. */
function workflowText(maxTurns: number | string, prompt = 'Work on {{ issue.identifier }}.'): string {
  return [
    '---',
    'tracker:',
    '  kind: file',
    '  active_states: [Todo]',
    '  terminal_states: [Done]',
    'file:',
    '  path: issues.json',
    'agent:',
    '  kind: mock',
    `  max_turns: ${maxTurns}`,
    '---',
    prompt,
    '',
  ].join('\n');
}

/** Line of `max_turns` in `workflowText`. */
const MAX_TURNS_LINE = 10;

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Polls `condition` every few ms until it holds; fails with `what` after the deadline. */
async function waitFor(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Harness {
  dir: string;
  file: string;
  watcher: WorkflowWatcher;
  changes: Workflow[];
  errors: Diagnostic[][];
  watchErrors: unknown[];
  /** How many times the watcher asked for a load. */
  loads: () => number;
}

async function watched(
  options: Partial<Pick<WatchWorkflowOptions, 'onChange' | 'debounceMs'>> = {},
): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'workflow-watcher-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'WORKFLOW.md');
  await writeFile(file, workflowText(3));
  const initial = loadWorkflow(file, { env: {} });
  if (!initial.ok) throw new Error(`fixture does not load: ${JSON.stringify(initial.diagnostics)}`);

  const changes: Workflow[] = [];
  const errors: Diagnostic[][] = [];
  const watchErrors: unknown[] = [];
  let loads = 0;
  const watcher = watchWorkflow(file, {
    initial: initial.workflow,
    load: (bytes): LoadResult => {
      loads++;
      return loadWorkflow(file, { env: {}, text: bytes });
    },
    onChange: (workflow) => {
      changes.push(workflow);
      options.onChange?.(workflow);
    },
    onError: (diagnostics) => errors.push(diagnostics),
    onWatchError: (error) => watchErrors.push(error),
    ...(options.debounceMs !== undefined ? { debounceMs: options.debounceMs } : {}),
  });
  cleanups.push(() => watcher.close());
  await watcher.ready;
  return { dir, file, watcher, changes, errors, watchErrors, loads: () => loads };
}

/**
 * Saves like vim or VS Code: write a sibling temp file, then rename it over the target.
 * Tests not about in-place writes save this way: an in-place write truncates first, and on a
 * loaded machine the debounce can fire between the truncation and the write.
 */
async function atomicSave(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

const maxTurns = (h: Harness): number => h.watcher.current().config.agent.maxTurns;

describe('watchWorkflow', () => {
  it('a plain in-place write is picked up (a missed event would leave the old config running)', async () => {
    const h = await watched();
    await writeFile(h.file, workflowText(5));
    await waitFor('max_turns 5 promoted', () => maxTurns(h) === 5);
    expect(h.changes.map((w) => w.config.agent.maxTurns)).toEqual([5]);
    expect(h.watcher.lastError()).toBeNull();
  });

  it('an editor-style atomic save (temp file renamed over) is picked up, and so is the next one', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText(5));
    await waitFor('first atomic save promoted', () => maxTurns(h) === 5);
    await atomicSave(h.file, workflowText(7));
    await waitFor('second atomic save promoted', () => maxTurns(h) === 7);
    expect(h.changes.map((w) => w.config.agent.maxTurns)).toEqual([5, 7]);
  });

  it('a broken save keeps the last good config and reports diagnostics with line numbers', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText(-4));
    await waitFor('the broken save reported', () => h.errors.length === 1);
    expect(maxTurns(h)).toBe(3);
    expect(h.changes).toEqual([]);
    expect(h.watcher.lastError()).toEqual(h.errors[0]);
    expect(h.errors[0]).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'agent.max_turns.out_of_range',
        line: MAX_TURNS_LINE,
        file: h.file,
      }),
    );
  });

  it('a YAML syntax error keeps the last good config and points at the offending line', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText('[oops'));
    await waitFor('the syntax error reported', () => h.errors.length === 1);
    expect(maxTurns(h)).toBe(3);
    expect(h.errors[0]).toContainEqual(
      expect.objectContaining({ code: 'workflow.yaml_syntax', line: MAX_TURNS_LINE }),
    );
  });

  it('fixing a broken save promotes the new config and clears the error', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText(-4));
    await waitFor('the broken save reported', () => h.watcher.lastError() !== null);
    await atomicSave(h.file, workflowText(9));
    await waitFor('the fix promoted', () => maxTurns(h) === 9);
    expect(h.watcher.lastError()).toBeNull();
    expect(h.changes.map((w) => w.config.agent.maxTurns)).toEqual([9]);
  });

  it('fixing a broken save back to the last good content is still announced, so the error is seen cleared', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText(-4));
    await waitFor('the broken save reported', () => h.watcher.lastError() !== null);
    await atomicSave(h.file, workflowText(3));
    await waitFor('the recovery announced', () => h.changes.length === 1);
    expect(h.watcher.lastError()).toBeNull();
    expect(maxTurns(h)).toBe(3);
  });

  it('a deleted workflow file keeps the last good config and reports that it cannot be read', async () => {
    const h = await watched();
    await unlink(h.file);
    await waitFor('the missing file reported', () => h.errors.length === 1);
    expect(maxTurns(h)).toBe(3);
    expect(h.errors[0]).toContainEqual(expect.objectContaining({ code: 'workflow.not_found' }));
  });

  it('several writes inside the debounce window cause one reload, of the last write', async () => {
    const h = await watched({ debounceMs: 200 });
    for (const turns of [4, 5, 6, 7, 8]) await atomicSave(h.file, workflowText(turns));
    await waitFor('the burst promoted', () => maxTurns(h) === 8);
    // A distinct later save marks the end of the burst without a fixed sleep: once it
    // is in, any straggling reload of the burst would already have been counted.
    await atomicSave(h.file, workflowText(12));
    await waitFor('the marker save promoted', () => maxTurns(h) === 12);
    expect(h.changes.map((w) => w.config.agent.maxTurns)).toEqual([8, 12]);
    expect(h.loads()).toBe(2);
  });

  it('rewriting the same bytes neither loads again nor announces a change', async () => {
    const h = await watched();
    const first = h.watcher.reload();
    expect(first.ok).toBe(true);
    await atomicSave(h.file, workflowText(3));
    const loadsBefore = h.loads();
    const again = h.watcher.reload();
    expect(again).toBe(first);
    expect(h.loads()).toBe(loadsBefore);
    expect(h.changes).toEqual([]);
  });

  it('a save that changes only a comment loads but announces nothing', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText('3 # tuned by hand'));
    const loadsBefore = h.loads();
    const result = h.watcher.reload();
    expect(result.ok).toBe(true);
    expect(h.loads()).toBe(loadsBefore + 1);
    expect(h.changes).toEqual([]);
  });

  it('reload() picks up a save at once, without waiting for a file event, and the event does not repeat it', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText(6));
    const result = h.watcher.reload();
    expect(result.ok && result.workflow.config.agent.maxTurns).toBe(6);
    expect(maxTurns(h)).toBe(6);
    await atomicSave(h.file, workflowText(11));
    await waitFor('the next save promoted', () => maxTurns(h) === 11);
    expect(h.changes.map((w) => w.config.agent.maxTurns)).toEqual([6, 11]);
  });

  it('repeated reloads of the same broken file report it once, not on every tick', async () => {
    const h = await watched();
    await atomicSave(h.file, workflowText(-4));
    const first = h.watcher.reload();
    const second = h.watcher.reload();
    expect(first.ok).toBe(false);
    expect(second).toBe(first);
    await atomicSave(h.file, workflowText(13));
    await waitFor('the fix promoted', () => maxTurns(h) === 13);
    expect(h.errors).toHaveLength(1);
  });

  it('an exception thrown by onChange does not escape the file watcher', async () => {
    const h = await watched({
      onChange: () => {
        throw new Error('consumer bug');
      },
    });
    await atomicSave(h.file, workflowText(5));
    await waitFor('the thrown error reported', () => h.watchErrors.length === 1);
    expect(maxTurns(h)).toBe(5);
    expect(String(h.watchErrors[0])).toContain('consumer bug');
  });

  it('after close() a save is no longer picked up', async () => {
    const h = await watched();
    await h.watcher.close();
    // A second, live watcher on the same file shows when the save would have arrived.
    const witness = watchWorkflow(h.file, {
      initial: h.watcher.current(),
      load: (bytes) => loadWorkflow(h.file, { env: {}, text: bytes }),
      onChange: () => {},
      onError: () => {},
    });
    cleanups.push(() => witness.close());
    await witness.ready;
    await atomicSave(h.file, workflowText(5));
    await waitFor('the witness saw the save', () => witness.current().config.agent.maxTurns === 5);
    await atomicSave(h.file, workflowText(6));
    await waitFor('the witness saw a second save', () => witness.current().config.agent.maxTurns === 6);
    expect(h.loads()).toBe(0);
    expect(h.changes).toEqual([]);
    expect(maxTurns(h)).toBe(3);
  });
});
