/**
 * Agent kinds by name, with the declarations every surface reads instead of
 * branching on a kind's name. Each kind's folder registers itself from its
 * index.ts; src/agent/kinds.ts imports every folder with one line. A declaration
 * that is incomplete or contradicts itself throws at registration, so it can
 * never reach a running service.
 */
import type { AgentAdapter } from '../domain/agent.js';
import type { ConfigIssue } from '../domain/diagnostic.js';
import { checkSources, type UsageDisposition, type UsageSources, usageDisposition } from './usage/index.js';

/**
 * The syntax in which a runtime reads tool-server configuration (rendered by
 * agent/core/tool-config.ts); `none` needs a reason. A dialect joins the list when a kind
 * is proven to read it.
 */
export type McpDialect = 'none' | 'mcp-json' | 'toml-config' | 'settings-json' | 'inline-config-json';

/** What a sandbox probe is given: the setup as a working session of the kind would get it. */
export interface SandboxProbeInput {
  /** `agent.command`; null = the kind's default. */
  command: string | null;
  /** The kind's pass-through block as the workflow gives it (unparsed). */
  options: Record<string, unknown>;
  /** The agent's environment (HOME, TMPDIR, PATH …), as sessions get it. */
  env: Record<string, string>;
  /** An existing folder standing for an issue workspace; the probe's command may write there. */
  workspacePath: string;
  timeoutMs: number;
}

/** What a sandbox probe found. */
export type SandboxProbeResult =
  /** The configured sandbox ran a command (writing in the workspace where the mode allows it). */
  | { status: 'usable'; detail: string }
  /** The configured mode confines nothing, so there is nothing to probe. */
  | { status: 'off'; detail: string }
  /**
   * The sandbox cannot run the agent's commands. `summary` says what failed, `cause` is the
   * runtime's own words, `fixes` the settings that help, most likely first.
   */
  | { status: 'unusable'; summary: string; cause: string; fixes: readonly string[] }
  /** The probe could not decide (the command is missing, or too old to be asked). */
  | { status: 'unchecked'; reason: string };

/**
 * How a kind's runtime confines the shell commands the model asks for. A sandbox that
 * cannot start usually fails every command while the turn still "succeeds", so each kind
 * says whether it can be asked before the first issue, and if not, what to check.
 */
export type SandboxDeclaration =
  /** The runtime sandboxes commands and can be asked, with the workflow's settings, whether that works here. */
  | { kind: 'probe'; probe: (input: SandboxProbeInput) => Promise<SandboxProbeResult> }
  /** No sandbox of the runtime stands between the model and this machine (or no commands run); `reason` says which. */
  | { kind: 'none'; reason: string }
  /** The runtime may sandbox commands but offers no way to ask; `whatToCheck` tells the operator. */
  | { kind: 'unprobeable'; whatToCheck: string };

/** Parts of the agent's context a credential-verification request still carries. */
export type VerificationComponent =
  | 'some_tools'
  | 'all_tools'
  | 'project_instructions'
  | 'user_instructions'
  | 'system_prompt';

/** What running a kind needs and how it reports; every field is a statement, "nothing" included. */
export interface AgentRuntimeDeclaration {
  /** Builds the one adapter instance that serves every session of the kind. */
  factory: () => AgentAdapter;
  /** The kind launches an external command (false for in-process kinds). */
  requiresCommand: boolean;
  /** What it launches when `agent.command` is absent; null = the workflow must give one. */
  defaultCommand: string | null;
  mcpDialect: McpDialect;
  /** Required when `mcpDialect` is `none`. */
  mcpDialectNoneReason?: string;
  /**
   * With `none` only: the runtime makes no tool calls at all (a test runtime), so having no
   * tool channel is no gap to report to the operator.
   */
  callsNoTools?: true;
  usageSources: UsageSources;
  /** Variables the runtime reads as its credential, in launch order; [] says "none". */
  credentialEnv: readonly string[];
  /** Whether the kind delivers its block's `effort` to the runtime on every turn. */
  effortForwarding: 'forwarded' | 'not_forwarded';
  /** Context the verification request keeps because the runtime offers no switch to drop it. */
  verificationContext: readonly VerificationComponent[];
  /** Whether a provider usage-limit refusal becomes `usage_limit` with its reset time. */
  usageLimitRecognition: 'recognized' | 'not_recognized';
  /** Required when `usageLimitRecognition` is `not_recognized`. */
  usageLimitNotRecognizedReason?: string;
  /** The block key that stops the runtime resuming a session, or null when it resumes normally. */
  sessionResumeBlockedBy?: (options: Record<string, unknown>) => string | null;
  /** How the runtime sandboxes tool commands, and whether start-up can ask it. */
  sandbox: SandboxDeclaration;
  /** How `orchestrator adapters` asks the command for its version when `--version` is slow or needs variables; absent = the default. */
  versionProbe?: { timeoutMs?: number; env?: Readonly<Record<string, string>> };
}

export interface AgentKindRegistration {
  /** Checks the kind's pass-through block with the same parser its sessions use. Paths start at the block name. */
  validateConfig(options: Record<string, unknown>): ConfigIssue[];
  /** Absent while the kind can be validated but not yet run by this build. */
  runtime?: AgentRuntimeDeclaration;
}

export interface AgentKind extends AgentKindRegistration {
  name: string;
  /** Derived from the usage sources; null for a kind without a runtime. */
  usageDisposition: UsageDisposition | null;
}

const kinds = new Map<string, AgentKind>();

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Variables the launch itself owns; a kind may not claim them as its credential. */
const RESERVED_ENV = new Set(['PATH', 'HOME', 'USER', 'SHELL', 'PWD', 'TERM', 'LANG']);

/** Every problem with a runtime declaration; [] when it is complete and consistent. */
export function checkDeclaration(kind: string, d: AgentRuntimeDeclaration): string[] {
  const problems: string[] = [];
  const missing = (
    [
      'factory',
      'requiresCommand',
      'defaultCommand',
      'mcpDialect',
      'usageSources',
      'credentialEnv',
      'effortForwarding',
      'verificationContext',
      'usageLimitRecognition',
      'sandbox',
    ] as const
  ).filter((field) => (d as unknown as Record<string, unknown>)[field] === undefined);
  for (const field of missing) problems.push(`${field} is not declared`);
  if (missing.length > 0) return problems;
  if (d.mcpDialect === 'none' && !d.mcpDialectNoneReason?.trim()) {
    problems.push('mcpDialect "none" needs mcpDialectNoneReason');
  }
  if (d.callsNoTools === true && d.mcpDialect !== 'none') {
    problems.push('callsNoTools contradicts a tool channel (mcpDialect is not "none")');
  }
  if (d.usageLimitRecognition === 'not_recognized' && !d.usageLimitNotRecognizedReason?.trim()) {
    problems.push('usageLimitRecognition "not_recognized" needs usageLimitNotRecognizedReason');
  }
  problems.push(...checkSandbox(d.sandbox));
  if (d.requiresCommand && d.defaultCommand !== null && d.defaultCommand.trim() === '') {
    problems.push('defaultCommand is empty');
  }
  if (!d.requiresCommand && d.defaultCommand !== null) {
    problems.push('defaultCommand is set but requiresCommand is false');
  }
  const seen = new Set<string>();
  for (const name of d.credentialEnv) {
    if (!ENV_NAME.test(name)) problems.push(`credentialEnv "${name}" is not a variable name`);
    if (RESERVED_ENV.has(name)) problems.push(`credentialEnv "${name}" is reserved for the launch`);
    if (seen.has(name)) problems.push(`credentialEnv "${name}" repeats`);
    seen.add(name);
  }
  if (d.verificationContext.includes('some_tools') && d.verificationContext.includes('all_tools')) {
    problems.push('verificationContext declares both some_tools and all_tools');
  }
  problems.push(...checkSources(d.usageSources).map((p) => `usageSources: ${p}`));
  return problems.map((p) => `agent kind ${kind}: ${p}`);
}

function checkSandbox(sandbox: SandboxDeclaration): string[] {
  switch (sandbox.kind) {
    case 'probe':
      return typeof sandbox.probe === 'function' ? [] : ['sandbox "probe" needs a probe function'];
    case 'none':
      return sandbox.reason?.trim() ? [] : ['sandbox "none" needs a reason'];
    case 'unprobeable':
      return sandbox.whatToCheck?.trim() ? [] : ['sandbox "unprobeable" needs whatToCheck'];
    default:
      return [`sandbox kind "${(sandbox as { kind: unknown }).kind}" is not probe, none or unprobeable`];
  }
}

/** Registers a kind; a second registration or a bad declaration is a programming error and throws. */
export function registerAgent(name: string, registration: AgentKindRegistration): void {
  if (kinds.has(name)) throw new Error(`agent kind ${name} registered twice`);
  if (registration.runtime !== undefined) {
    const problems = checkDeclaration(name, registration.runtime);
    if (problems.length > 0) throw new Error(problems.join('; '));
  }
  kinds.set(name, {
    name,
    ...registration,
    usageDisposition: registration.runtime ? usageDisposition(registration.runtime.usageSources) : null,
  });
}

/** The kind registered under `name`, or undefined. */
export function agentKind(name: string): AgentKind | undefined {
  return kinds.get(name);
}

/** Names of every registered agent kind, sorted. */
export function agentKindNames(): string[] {
  return [...kinds.keys()].sort();
}

/** Every registered kind, sorted by name. */
export function agentKinds(): AgentKind[] {
  return agentKindNames().map((n) => kinds.get(n) as AgentKind);
}
