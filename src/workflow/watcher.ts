/**
 * Hot reload of WORKFLOW.md. A running service must survive a bad save: a reload
 * that fails keeps the last good workflow and reports the diagnostics, and a later
 * good save promotes itself. The traps it avoids: editors save by writing a temp
 * file and renaming it over the original, which a raw fs.watch on the file loses
 * once the watched inode is gone, so the parent directory is watched and only
 * events naming this file count; and one save arrives as a burst of events, so
 * reloads wait until the file has been quiet for the debounce period (a writer still
 * writing keeps postponing it). The directory is watched with a bare `fs.watch`, not
 * a library that re-lists the directory and stats every entry on each event: the
 * database, the tracker file and logs often live beside WORKFLOW.md and change many
 * times a second under load. The watcher is an accelerator only: the caller also
 * calls `reload()` on every tick, which is cheap when the bytes have not changed.
 */
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Diagnostic } from '../domain/diagnostic.js';
import type { LoadResult, Workflow } from './load.js';

/** Quiet period after the last file event before a reload. */
export const DEFAULT_WATCH_DEBOUNCE_MS = 50;

export interface WatchWorkflowOptions {
  /** The workflow the caller loaded at start; `current()` until a good reload replaces it. */
  initial: Workflow;
  /**
   * Loads the workflow. `bytes` are the file contents the watcher just read (load them
   * rather than reading again, so the unchanged-bytes check and the load agree);
   * undefined when the watcher could not read the file, so load reports why. Must not throw.
   */
  load: (bytes?: Uint8Array) => LoadResult;
  /** Called after a good reload whose workflow differs from `current()`, or that clears an error. */
  onChange: (workflow: Workflow) => void;
  /** Called after a failed reload; `current()` still returns the last good workflow. */
  onError: (diagnostics: Diagnostic[]) => void;
  /** Quiet period after the last file event before reloading, in ms. */
  debounceMs?: number;
  /**
   * Called with a file system watch error, or with an exception thrown by `onChange`/`onError`
   * during a file-triggered reload: nothing escapes the watcher's own callbacks.
   * Default: ignored (the caller's per-tick `reload()` covers missed events).
   */
  onWatchError?: (error: unknown) => void;
}

export interface WorkflowWatcher {
  /** The last good workflow. */
  current(): Workflow;
  /** Diagnostics of the latest reload when it failed; null once a good reload follows. */
  lastError(): Diagnostic[] | null;
  /**
   * Re-reads the file now, with the same effects and callbacks as a file event; for the
   * defensive reload on every tick. Unchanged bytes return the previous result without
   * loading or calling back. Throws only if a callback throws.
   */
  reload(): LoadResult;
  /** Stops watching and cancels a pending reload; `reload()` keeps working. */
  close(): Promise<void>;
  /** Resolves once the file system watch is in place (or the watcher is closed); at once, today. */
  ready: Promise<void>;
}

/** Watches `workflowPath` and reloads it on change; the initial load is the caller's. */
export function watchWorkflow(workflowPath: string, options: WatchWorkflowOptions): WorkflowWatcher {
  const file = path.resolve(workflowPath);
  const dir = path.dirname(file);
  const debounceMs = options.debounceMs ?? DEFAULT_WATCH_DEBOUNCE_MS;

  let current = options.initial;
  let lastError: Diagnostic[] | null = null;
  /** The bytes of the last load (null: the file could not be read) and what it gave. */
  let last: { bytes: Uint8Array | null; result: LoadResult } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;

  const report = (error: unknown): void => {
    try {
      options.onWatchError?.(error);
    } catch {
      // The error handler itself failed; there is nowhere left to send it.
    }
  };

  const reload = (): LoadResult => {
    const bytes = readBytes(file);
    if (last !== null && sameBytes(last.bytes, bytes)) return last.result;
    const result = options.load(bytes ?? undefined);
    last = { bytes, result };
    if (!result.ok) {
      lastError = result.diagnostics;
      options.onError(result.diagnostics);
      return result;
    }
    const recovered = lastError !== null;
    lastError = null;
    if (recovered || !sameWorkflow(current, result.workflow)) {
      current = result.workflow;
      options.onChange(result.workflow);
    }
    return result;
  };

  const fire = (): void => {
    timer = null;
    if (closed) return;
    try {
      reload();
    } catch (error) {
      report(error);
    }
  };

  const schedule = (): void => {
    if (closed) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(fire, debounceMs);
  };

  const name = path.basename(file);
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dir, (_event, changed) => {
      // Some platforms cannot name the file; a reload of unchanged bytes costs a read and a compare.
      if (changed === null || changed.toString() === name) schedule();
    });
    watcher.on('error', report);
  } catch (error) {
    // A directory that cannot be watched leaves the per-tick reload to find changes.
    report(error);
  }
  const ready = Promise.resolve();

  return {
    current: () => current,
    lastError: () => lastError,
    reload,
    ready,
    async close() {
      closed = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      watcher?.close();
    },
  };
}

function readBytes(file: string): Uint8Array | null {
  try {
    return readFileSync(file);
  } catch {
    return null;
  }
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return Buffer.compare(a, b) === 0;
}

/** Same config and prompt: a save that only touched comments or spacing announces nothing. */
function sameWorkflow(a: Workflow, b: Workflow): boolean {
  return (
    a.promptSource === b.promptSource &&
    isDeepStrictEqual(a.promptOrigin, b.promptOrigin) &&
    isDeepStrictEqual(a.config, b.config)
  );
}
