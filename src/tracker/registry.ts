/**
 * Tracker kinds by name. Each kind's folder registers itself with one line in
 * kinds.ts; core code looks kinds up here and never names a product.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { ForgeAdapter } from '../domain/forge.js';
import type { TrackerAdapter, TrackerSettings } from '../domain/tracker.js';
import type { LocalFile } from '../workflow/local-files.js';

/** Whether a tracker answered at all; `reason` says what happened instead ("connection refused"). */
export type Reachability = { ok: true } | { ok: false; address: string; reason: string };

/** What the service lends a tracker it creates. */
export interface TrackerContext {
  /** Operator warnings (a page cap reached, incomplete results), logged by the service. */
  warn(message: string): void;
}

export interface TrackerKind {
  /** `tracker.api_key` must resolve to a non-empty value. */
  requiresApiKey: boolean;
  /** What to write when `tracker.api_key` is missing, ending the error's message. */
  apiKeyHelp?: string;
  /** `tracker.project` must be set. */
  requiresProject: boolean;
  /**
   * A variable read for the token when `tracker.api_key` is absent or empty (the kind's
   * conventional one); absent = no fallback. Its value is used, never written anywhere.
   */
  apiKeyEnv?: string;
  /** The states used when the workflow lists none; absent = the workflow must list them. */
  defaultStates?: { active: readonly string[]; terminal: readonly string[] };
  /** The kind routes by `tracker.assignee`; absent or false = the key has no effect (validate warns). */
  supportsAssignee?: boolean;
  /** Checks the kind's settings and pass-through block; the same rules `create` enforces. */
  validateConfig(settings: TrackerSettings): ConfigIssue[];
  /** Files on this machine the kind reads while it runs, so loading can check they exist; absent = none. */
  localFiles?: (settings: TrackerSettings) => LocalFile[];
  /**
   * Asks the tracker for any answer within `timeoutMs`, so a dry run can say at once that it
   * cannot reach it instead of waiting out retries. Absent for kinds with nothing to reach.
   */
  reach?: (settings: TrackerSettings, timeoutMs: number) => Promise<Reachability>;
  /**
   * Builds an adapter, importing heavy clients lazily so `validate` never pays for
   * them. Absent while a kind can be validated but not yet run by this build.
   */
  create?: (settings: TrackerSettings, context?: TrackerContext) => Promise<TrackerAdapter>;
  /**
   * Builds the forge (pull requests, CI, reviews, merge) of a kind whose host is one, with the
   * tracker's settings and token; absent = this kind has no forge.
   */
  createForge?: (settings: TrackerSettings, context?: TrackerContext) => Promise<ForgeAdapter>;
}

const kinds = new Map<string, TrackerKind>();

/** Registers a tracker kind; registering a name twice is a programming error. */
export function registerTracker(name: string, kind: TrackerKind): void {
  if (kinds.has(name)) throw new Error(`tracker kind ${name} registered twice`);
  kinds.set(name, kind);
}

/** The kind registered under `name`, or undefined. */
export function trackerKind(name: string): TrackerKind | undefined {
  return kinds.get(name);
}

/** Names of every registered tracker kind, sorted. */
export function trackerKindNames(): string[] {
  return [...kinds.keys()].sort();
}
