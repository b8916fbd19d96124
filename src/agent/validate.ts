/**
 * Checks the agent part of a workflow from the kind's declarations: the kind's
 * own block parser, then the generic rules every declaration implies (a command
 * to launch, a block key that breaks session resume, settings that would be
 * inert for this kind). Core code never branches on a kind's name here.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import { agentKind } from './registry.js';

/** The agent settings the generic rules read. */
export interface AgentCheckInput {
  command: string | null;
  maxTokens: number;
}

/** Every issue with a known kind's block; with `agent` set, also the rules for the active kind. */
export function checkAgentSettings(
  kind: string,
  options: Record<string, unknown>,
  agent?: AgentCheckInput,
): ConfigIssue[] {
  const found = agentKind(kind);
  if (found === undefined) return [];
  const issues = found.validateConfig(options);
  const runtime = found.runtime;
  if (agent === undefined || runtime === undefined) return issues;
  if (runtime.requiresCommand && runtime.defaultCommand === null && agent.command === null) {
    issues.push({
      severity: 'error',
      code: 'agent.command.missing',
      message: `agent kind "${kind}" has no default command: set agent.command`,
      path: ['agent', 'command'],
    });
  }
  const blocking = runtime.sessionResumeBlockedBy?.(options) ?? null;
  if (blocking !== null) {
    issues.push({
      severity: 'error',
      code: 'agent.kind.session_resume',
      message: `${kind}.${blocking} stops the runtime resuming a session, which continuation turns and retries need`,
      path: [kind, blocking],
    });
  }
  if (runtime.effortForwarding === 'not_forwarded' && options.effort !== undefined) {
    issues.push({
      severity: 'warning',
      code: 'agent.effort.not_forwarded',
      message: `agent kind "${kind}" does not forward ${kind}.effort to its runtime; the setting has no effect`,
      path: [kind, 'effort'],
    });
  }
  if (found.usageDisposition?.arrival === 'none' && agent.maxTokens > 0) {
    issues.push({
      severity: 'warning',
      code: 'agent.kind.no_usage_reporting',
      message: `agent kind "${kind}" reports no token figures, so agent.max_tokens can never be reached`,
      path: ['agent', 'max_tokens'],
    });
  }
  return issues;
}
