/**
 * Tracker kinds by name. Each kind's folder registers itself with one line in
 * kinds.ts; core code looks kinds up here and never names a product.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { TrackerAdapter, TrackerSettings } from '../domain/tracker.js';

/** What the service lends a tracker it creates. */
export interface TrackerContext {
  /** Operator warnings (a page cap reached, incomplete results), logged by the service. */
  warn(message: string): void;
}

export interface TrackerKind {
  /** `tracker.api_key` must resolve to a non-empty value. */
  requiresApiKey: boolean;
  /** `tracker.project` must be set. */
  requiresProject: boolean;
  /** Checks the kind's settings and pass-through block; the same rules `create` enforces. */
  validateConfig(settings: TrackerSettings): ConfigIssue[];
  /**
   * Builds an adapter, importing heavy clients lazily so `validate` never pays for
   * them. Absent while a kind can be validated but not yet run by this build.
   */
  create?: (settings: TrackerSettings, context?: TrackerContext) => Promise<TrackerAdapter>;
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
