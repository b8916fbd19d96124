/**
 * Tokens by model since the server started, summed from the orchestrator's `tokens`
 * observations. The snapshot only holds the sessions running now and the store keeps
 * per-run totals, so "which models did this instance spend on" exists nowhere else.
 */
import { addCounts, ZERO } from '../agent/usage/index.js';
import type { TokenCounts } from '../domain/agent.js';
import type { Observation } from '../orchestrator/observations.js';

export class ModelTokens {
  readonly #byModel = new Map<string, TokenCounts>();

  /** Adds a `tokens` observation; every other observation is ignored. */
  observe(observation: Observation): void {
    if (observation.type !== 'tokens') return;
    const before = this.#byModel.get(observation.model);
    this.#byModel.set(observation.model, addCounts(before ?? ZERO, observation.delta));
  }

  /** A copy, by model name. */
  snapshot(): Record<string, TokenCounts> {
    return Object.fromEntries([...this.#byModel].map(([model, counts]) => [model, { ...counts }]));
  }
}
