/**
 * What the workflow layer needs to know about adapter kinds without importing
 * them: the composition root hands a catalog in, so validation of `tracker.kind`,
 * `agent.kind` and their pass-through blocks uses the kinds' own parsers.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { TrackerSettings } from '../domain/tracker.js';
import type { LocalFile } from './local-files.js';

export interface KindCatalog {
  trackerKinds: readonly string[];
  agentKinds: readonly string[];
  /** Checks a known tracker kind's settings and block; paths are front-matter paths. */
  checkTracker(settings: TrackerSettings): ConfigIssue[];
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
    },
  ): ConfigIssue[];
}
