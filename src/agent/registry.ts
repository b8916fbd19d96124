/**
 * Agent kinds by name. Each kind's folder registers itself from its index.ts and
 * src/agent/kinds.ts imports every folder with one line; core code looks kinds up
 * here and never names a product.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';

export interface AgentKindMeta {
  /** Checks the kind's pass-through block with the same parser its sessions use. Paths start at the block name. */
  validateConfig(options: Record<string, unknown>): ConfigIssue[];
}

const kinds = new Map<string, AgentKindMeta>();

/** Registers an agent kind; a second registration of the same name is a programming error. */
export function registerAgent(kind: string, meta: AgentKindMeta): void {
  if (kinds.has(kind)) throw new Error(`agent kind ${kind} registered twice`);
  kinds.set(kind, meta);
}

/** The kind registered under `name`, or undefined. */
export function agentKind(name: string): AgentKindMeta | undefined {
  return kinds.get(name);
}

/** Names of every registered agent kind, sorted. */
export function agentKindNames(): string[] {
  return [...kinds.keys()].sort();
}
