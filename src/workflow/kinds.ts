/**
 * What the workflow layer needs to know about adapter kinds without importing
 * them: the composition root hands a catalog in, so validation of `tracker.kind`,
 * `agent.kind` and their pass-through blocks uses the kinds' own parsers.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { TrackerSettings } from '../domain/tracker.js';
import type { LocalFile } from './local-files.js';

/** What the loader applies for a tracker kind before the schema runs; every field optional. */
export interface TrackerTraits {
  /** Variable read for the token when `tracker.api_key` is absent or empty. */
  apiKeyEnv?: string;
  /** States used when `tracker.active_states` / `terminal_states` are absent. */
  defaultStates?: { active: readonly string[]; terminal: readonly string[] };
  /** The kind routes by `tracker.assignee`. */
  supportsAssignee?: boolean;
  /** The kind's host opens pull requests (`git.pull_request`). */
  hasForge?: boolean;
}

export interface KindCatalog {
  trackerKinds: readonly string[];
  agentKinds: readonly string[];
  /** Checks a known tracker kind's settings and block; paths are front-matter paths. */
  checkTracker(settings: TrackerSettings): ConfigIssue[];
  /** The defaults and capabilities a tracker kind declares; undefined for an unknown kind. */
  trackerTraits?(kind: string): TrackerTraits | undefined;
  /** Files on this machine a known tracker kind reads while it runs ([] for none or an unknown kind). */
  trackerFiles?(settings: TrackerSettings): LocalFile[];
  /**
   * Checks a known agent kind's pass-through block (`<kind>:`); with `agent`, also
   * the rules the kind's declarations imply for the active kind.
   */
  checkAgent(
    kind: string,
    options: Record<string, unknown>,
    agent?: {
      command: string | null;
      maxTokens: number;
      /** The resolved tracker token ('' when none). */
      trackerToken?: string;
      /** The environment the agent's credentials are read from. */
      env?: Readonly<Record<string, string | undefined>>;
      /** `tools.enabled`. */
      toolsEnabled?: boolean;
    },
  ): ConfigIssue[];
}
