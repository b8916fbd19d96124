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
  /** The resolved tracker token ('' when none). */
  trackerToken?: string;
  /** The environment the kind's credential variables are read from. */
  env?: Readonly<Record<string, string | undefined>>;
  /** `tools.enabled`: sessions are to be given the tool server. */
  toolsEnabled?: boolean;
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
  // The agent gets its kind's credential variables, and never a variable holding the tracker
  // token: a token that is both cannot honour both rules, so it is refused, not guessed.
  const token = agent.trackerToken ?? '';
  const env = agent.env ?? {};
  const shared = token === '' ? [] : runtime.credentialEnv.filter((name) => env[name] === token);
  if (shared.length > 0) {
    issues.push({
      severity: 'error',
      code: 'agent.credential.tracker_token',
      message: `the tracker token is also the value of ${shared.join(', ')}, which agent kind "${kind}" receives as its credential; give the tracker and the agent separate tokens`,
      path: ['tracker', 'api_key'],
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
  if (agent.toolsEnabled === true && runtime.mcpDialect === 'none' && runtime.callsNoTools !== true) {
    issues.push({
      severity: 'warning',
      code: 'agent.kind.no_tool_channel',
      message: `agent kind "${kind}" cannot reach the tool server (${runtime.mcpDialectNoneReason ?? 'no tool channel'}); its sessions run without the tools`,
      path: ['agent', 'kind'],
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
