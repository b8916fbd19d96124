/**
 * What the HTTP server reads and asks of the running service. The composition
 * root (cli/service.ts) hands in the real orchestrator, store and metrics;
 * tests hand in the same real parts or small fakes. The server never mutates
 * orchestrator state: it reads snapshots and asks for refreshes.
 */
import type { TokenCounts } from '../domain/agent.js';
import type { Observation } from '../orchestrator/observations.js';
import type { OrchestratorSnapshot } from '../orchestrator/orchestrator.js';
import type { Store } from '../persistence/index.js';
import type { ServiceConfig } from '../workflow/config.js';

/** The store reads the API needs. */
export type ServerStore = Pick<
  Store,
  | 'recentRuns'
  | 'runsForIssue'
  | 'runByIdentifier'
  | 'turnsForRun'
  | 'totals'
  | 'unpricedRuns'
  | 'retryFor'
  | 'ping'
  | 'toolCalls'
>;

/** One agent kind's health, as `orchestrator adapters` reports it. */
export interface AdapterHealth {
  kind: string;
  runnable: boolean;
  version: string | null;
  health: string;
  detail: string;
}

export interface ServerSources {
  version: string;
  startedAtMs: number;
  nowMs(): number;
  /** The workflow file the service runs. */
  workflowPath: string;
  snapshot(): OrchestratorSnapshot;
  store: ServerStore;
  /** The current good config (after hot reloads). */
  config(): ServiceConfig;
  /** Settled micro-dollars for token counts under the current rates; null when no rate is set. */
  priceTokens(usage: TokenCounts): number | null;
  /** Health of the configured agent kind and the others registered; probed once at start. */
  adapters(): readonly AdapterHealth[];
  /** Asks the orchestrator for a tick soon. */
  refresh(): 'queued' | 'coalesced' | 'draining';
  /** Prometheus exposition of the service's registry. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Replaces every secret value in text the server is about to send (JSON bodies, events, metrics). */
  mask(text: string): string;
  /** Every observation of the orchestrator, as it happens; returns the unsubscribe function. */
  subscribe(listener: (observation: Observation) => void): () => void;
}
