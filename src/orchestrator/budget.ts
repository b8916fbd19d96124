/**
 * Per-issue budgets: sessions, tokens and dollars an issue may spend before the
 * orchestrator stops dispatching it. Checked before claiming and between turns,
 * from figures the usage core settled, never from guesses.
 */
import { formatDollars } from '../agent/usage/index.js';

export interface BudgetLimits {
  /** 0 = unlimited. */
  maxSessions: number;
  maxTokens: number;
  maxCostMicroUsd: number;
}

export interface IssueSpend {
  sessions: number;
  tokens: number;
  /** null = no figure could be priced. */
  costMicroUsd: number | null;
}

export type BudgetVerdict =
  | { exhausted: false }
  | { exhausted: true; limit: 'max_sessions' | 'max_tokens' | 'max_cost_usd'; detail: string };

/** Whether `spend` has reached a limit; `startingSession` counts the session about to start. */
export function budgetVerdict(
  spend: IssueSpend,
  limits: BudgetLimits,
  startingSession: boolean,
): BudgetVerdict {
  const sessions = spend.sessions + (startingSession ? 1 : 0);
  if (limits.maxSessions > 0 && sessions > limits.maxSessions) {
    return {
      exhausted: true,
      limit: 'max_sessions',
      detail: `${spend.sessions} of ${limits.maxSessions} sessions used`,
    };
  }
  if (limits.maxTokens > 0 && spend.tokens >= limits.maxTokens) {
    return {
      exhausted: true,
      limit: 'max_tokens',
      detail: `${spend.tokens} of ${limits.maxTokens} tokens used`,
    };
  }
  if (
    limits.maxCostMicroUsd > 0 &&
    spend.costMicroUsd !== null &&
    spend.costMicroUsd >= limits.maxCostMicroUsd
  ) {
    return {
      exhausted: true,
      limit: 'max_cost_usd',
      detail: `${formatDollars(spend.costMicroUsd)} of ${formatDollars(limits.maxCostMicroUsd)} spent`,
    };
  }
  return { exhausted: false };
}
