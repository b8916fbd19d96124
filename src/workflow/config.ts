/**
 * The typed service config every other layer reads. Built from the validated
 * front matter; this is where `$VAR`/`~` are resolved, relative paths anchored to
 * WORKFLOW.md, and keys that only make sense together are checked together.
 */
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { ToolDelivery } from '../domain/tool-delivery.js';
import type { TrackerSettings } from '../domain/tracker.js';
import { splitCommandLine } from './command-line.js';
import { type Env, type Expansion, expandAll, expandHome, expandPath, expandTargeted } from './env-vars.js';
import { parseHostSpec } from './host-spec.js';
import { NO_OPERATOR_TOOLS } from './mcp-config.js';
import type { FrontMatter } from './schema.js';
import { isLoopbackAddress, parseAllowedHost } from './server-hosts.js';

/** The HTTP port when the workflow names none. */
export const DEFAULT_SERVER_PORT = 7678;

export interface HooksConfig {
  afterCreate: string | null;
  beforeRun: string | null;
  afterRun: string | null;
  beforeRemove: string | null;
  timeoutMs: number;
}

export interface AgentConfig {
  kind: string;
  /** Absolute path of `agent.mcp_config`; null when not set. */
  mcpConfigPath: string | null;
  /** The operator's own tool servers from that file (load.ts reads it); none when not set. */
  mcpServers: ToolDelivery;
  /** null = the kind's default command. */
  command: string | null;
  turnTimeoutMs: number;
  readTimeoutMs: number;
  /** 0 disables stall detection. */
  stallTimeoutMs: number;
  /** CPU niceness added to local agent processes (0–19). */
  niceness: number;
  maxConcurrentAgents: number;
  maxTurns: number;
  maxRetryBackoffMs: number;
  /** Lowercased state → cap. */
  maxConcurrentAgentsByState: Record<string, number>;
  /** 0 = unlimited. */
  maxSessions: number;
  /** Per issue; 0 = unlimited. */
  maxTokens: number;
  /** Per issue, in USD; 0 = unlimited. */
  maxCostUsd: number;
  /**
   * Per issue: sessions in a row that may end with the issue's tracker state as it was when
   * their first turn started, before the issue is stopped like a spent budget; 0 = unlimited.
   */
  maxUnchangedSessions: number;
}

export interface TokenRates {
  inputPerMtok: number;
  outputPerMtok: number;
  cacheReadPerMtok: number;
  cacheWritePerMtok: number;
}

/** The `git:` block: the orchestrator's branch, push and pull request for each issue. */
export interface GitConfig {
  baseBranch: string;
  /** Liquid, rendered per issue and sanitised to a valid ref name. */
  branchTemplate: string;
  remote: string;
  push: boolean;
  /** A successful run with no commit and no change is parked instead of handed off. */
  requireChanges: boolean;
  pullRequest: {
    enabled: boolean;
    draft: boolean;
    /** Liquid templates. */
    titleTemplate: string;
    bodyTemplate: string;
    labels: string[];
    /** Adds "Closes #N" when the issue lives in the same GitHub repository. */
    linkIssue: boolean;
  };
}

export interface ServiceConfig {
  workflowPath: string;
  tracker: TrackerSettings & {
    comments: { onDispatch: boolean; onCompletion: boolean; onFailure: boolean; onBlocked: boolean };
  };
  pollingIntervalMs: number;
  workspaceRoot: string;
  hooks: HooksConfig;
  agent: AgentConfig;
  /** The agent kind's own pass-through block, {} when absent. */
  agentOptions: Record<string, unknown>;
  dbPath: string;
  /** port 0 disables the server; `portExplicit` says the operator wrote the port (a busy one is then fatal). */
  server: {
    port: number;
    host: string;
    portExplicit: boolean;
    /** Host names (lower case, no port) requests may name besides loopback ones; [] = any, unless bound to loopback. */
    allowedHosts: string[];
  };
  logging: { level: 'debug' | 'info' | 'warn' | 'error'; format: 'auto' | 'json' | 'pretty' };
  worker: {
    /** `[user@]host[:port]` entries as written (trimmed, valid, de-duplicated); [] = agents run locally. */
    sshHosts: string[];
    /** 0 = no per-host cap. */
    maxConcurrentAgentsPerHost: number;
    sshStrictHostKeyChecking: 'accept-new' | 'yes' | 'no';
    /** Absolute path of the private key; null = keys of the ssh agent at SSH_AUTH_SOCK. */
    identityFile: string | null;
    /** Absolute path of the known-hosts file the service reads and (with accept-new) writes. */
    knownHostsFile: string;
    /** Login name for entries without `user@`; null = the local user name. */
    user: string | null;
    connectTimeoutMs: number;
    /** Names of this machine's variables sent to agents on hosts (beside the kind's credentials). */
    forwardEnv: string[];
  };
  /** Agent kind → rates in USD per million tokens. */
  tokenRates: Record<string, TokenRates>;
  /** null: no `git:` block (the orchestrator neither branches, pushes nor opens pull requests). */
  git: GitConfig | null;
  selfReview: FrontMatter['self_review'];
  reactions: FrontMatter['reactions'];
  /** The agents' tool server (`tools:`): served to every session whose kind can reach it. */
  tools: { enabled: boolean; allowOtherIssues: boolean; maxCommentChars: number };
}

export interface BuildContext {
  workflowPath: string;
  env: Env;
  /** Dotted paths set by ORCHESTRATOR_* overrides: no `$` expansion for those. */
  overridden: { has(path: string): boolean };
  home?: string;
  tmpdir?: string;
}

/** Builds the typed config and reports every cross-field problem at once. */
export function buildServiceConfig(
  fm: FrontMatter,
  ctx: BuildContext,
): { config: ServiceConfig; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const home = ctx.home ?? os.homedir();
  const baseDir = path.dirname(ctx.workflowPath);

  const resolve = (
    value: string,
    at: string[],
    how: (v: string, env: Env) => Expansion,
    required = false,
  ): string => {
    if (ctx.overridden.has(at.join('.'))) return value;
    const result = how(value, ctx.env);
    if (!result.ok) {
      issues.push({
        severity: 'error',
        code: `${at.join('.')}.bad_reference`,
        message: result.message,
        path: at,
      });
      return '';
    }
    if (required && result.names.length > 0 && result.value.trim() === '') {
      issues.push({
        severity: 'error',
        code: `${at.join('.')}.empty`,
        message: `${at.join('.')} resolved to empty (check environment variable ${result.names.join(', ')})`,
        path: at,
      });
    }
    return result.value;
  };

  const t = fm.tracker;
  const optionalState = (value: string | undefined, key: string): string | null => {
    if (value === undefined) return null;
    const at = ['tracker', key];
    if (value.trim() === '') {
      issues.push({
        severity: 'error',
        code: `tracker.${key}.empty`,
        message: `tracker.${key} must not be empty`,
        path: at,
      });
      return null;
    }
    const resolved = resolve(value, at, expandTargeted, true).trim();
    return resolved === '' ? null : resolved;
  };

  const trackerKind = t.kind?.trim() ?? '';
  const tracker: ServiceConfig['tracker'] = {
    kind: trackerKind,
    endpoint: resolve(t.endpoint, ['tracker', 'endpoint'], expandTargeted).trim(),
    apiKey: resolve(t.api_key, ['tracker', 'api_key'], expandAll, true).trim(),
    project: resolve(t.project, ['tracker', 'project'], expandTargeted, true).trim(),
    queryFilter: resolve(t.query_filter, ['tracker', 'query_filter'], expandTargeted).trim(),
    assignee: optionalState(t.assignee, 'assignee'),
    requiredLabels: t.required_labels.map((label) => label.trim().toLowerCase()),
    activeStates: t.active_states,
    terminalStates: t.terminal_states,
    handoffState: optionalState(t.handoff_state, 'handoff_state'),
    inProgressState: optionalState(t.in_progress_state, 'in_progress_state'),
    blockedState: optionalState(t.blocked_state, 'blocked_state'),
    options: recordAt(fm, trackerKind),
    baseDir,
    comments: {
      onDispatch: t.comments.on_dispatch,
      onCompletion: t.comments.on_completion,
      onFailure: t.comments.on_failure,
      onBlocked: t.comments.on_blocked,
    },
  };
  issues.push(...stateRules(tracker, trackerKind === ''));
  issues.push(...blankLabels(tracker.requiredLabels));
  if (!ctx.overridden.has('tracker.api_key')) {
    const literal = literalToken(t.api_key);
    if (literal !== null) issues.push(literal);
  }

  const pathValue = (raw: string | undefined, at: string[], fallback: string): string => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const expanded = ctx.overridden.has(at.join('.'))
      ? expandHome(raw.trim(), home)
      : resolve(raw.trim(), at, (v, env) => expandPath(v, env, home), true);
    if (expanded === '') return fallback;
    return path.resolve(baseDir, expanded);
  };

  const optionalPath = (raw: string | undefined, at: string[]): string | null => {
    const resolved = pathValue(raw, at, '');
    return resolved === '' ? null : resolved;
  };
  const sshHosts = sshHostList(fm.worker.ssh_hosts, issues);
  const sshUser = fm.worker.ssh_user?.trim() ? fm.worker.ssh_user.trim() : null;
  if (sshUser !== null && !parseHostSpec(`${sshUser}@localhost`).ok) {
    issues.push({
      severity: 'error',
      code: 'worker.ssh_user.invalid',
      message: `worker.ssh_user "${sshUser}" is not a valid login name (letters, digits, ".", "_", "-")`,
      path: ['worker', 'ssh_user'],
    });
  }

  const forwardEnv = [...new Set(fm.worker.ssh_forward_env.map((n) => n.trim()))];
  fm.worker.ssh_forward_env.forEach((raw, index) => {
    const name = raw.trim();
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return;
    issues.push({
      severity: 'error',
      code: 'worker.ssh_forward_env.invalid',
      message: `worker.ssh_forward_env entry "${name}" is not an environment variable name`,
      path: ['worker', 'ssh_forward_env', index],
    });
  });

  const agentKind = fm.agent.kind?.trim() ?? '';
  if (agentKind === '') {
    issues.push({
      severity: 'error',
      code: 'agent.kind.missing',
      message: 'agent.kind is required: which agent runtime runs the issues (for example "mock")',
      path: ['agent', 'kind'],
    });
  }
  const config: ServiceConfig = {
    workflowPath: ctx.workflowPath,
    tracker,
    pollingIntervalMs: fm.polling.interval_ms,
    workspaceRoot: pathValue(
      fm.workspace.root,
      ['workspace', 'root'],
      path.join(ctx.tmpdir ?? os.tmpdir(), 'orchestrator_workspaces'),
    ),
    hooks: {
      afterCreate: fm.hooks.after_create ?? null,
      beforeRun: fm.hooks.before_run ?? null,
      afterRun: fm.hooks.after_run ?? null,
      beforeRemove: fm.hooks.before_remove ?? null,
      timeoutMs: fm.hooks.timeout_ms,
    },
    agent: {
      kind: agentKind,
      mcpConfigPath: optionalPath(fm.agent.mcp_config, ['agent', 'mcp_config']),
      mcpServers: NO_OPERATOR_TOOLS,
      command: fm.agent.command?.trim() ? fm.agent.command.trim() : null,
      turnTimeoutMs: fm.agent.turn_timeout_ms,
      readTimeoutMs: fm.agent.read_timeout_ms,
      stallTimeoutMs: fm.agent.stall_timeout_ms,
      niceness: fm.agent.nice,
      maxConcurrentAgents: fm.agent.max_concurrent_agents,
      maxTurns: fm.agent.max_turns,
      maxRetryBackoffMs: fm.agent.max_retry_backoff_ms,
      maxConcurrentAgentsByState: Object.fromEntries(
        Object.entries(fm.agent.max_concurrent_agents_by_state).map(([k, v]) => [k.trim().toLowerCase(), v]),
      ),
      maxSessions: fm.agent.max_sessions,
      maxTokens: fm.agent.max_tokens,
      maxCostUsd: fm.agent.max_cost_usd,
      maxUnchangedSessions: fm.agent.max_unchanged_sessions,
    },
    agentOptions: recordAt(fm, agentKind),
    dbPath: pathValue(fm.db_path, ['db_path'], path.join(baseDir, '.orchestrator.db')),
    server: {
      port: fm.server.port ?? DEFAULT_SERVER_PORT,
      host: fm.server.host.trim(),
      portExplicit: fm.server.port !== undefined,
      allowedHosts: allowedHostList(fm.server.allowed_hosts, issues),
    },
    logging: fm.logging,
    worker: {
      sshHosts,
      maxConcurrentAgentsPerHost: fm.worker.max_concurrent_agents_per_host,
      sshStrictHostKeyChecking: fm.worker.ssh_strict_host_key_checking,
      identityFile: optionalPath(fm.worker.ssh_identity_file, ['worker', 'ssh_identity_file']),
      knownHostsFile: pathValue(
        fm.worker.ssh_known_hosts_file,
        ['worker', 'ssh_known_hosts_file'],
        path.join(baseDir, '.orchestrator-known-hosts'),
      ),
      user: sshUser,
      connectTimeoutMs: fm.worker.ssh_connect_timeout_ms,
      forwardEnv,
    },
    tokenRates: Object.fromEntries(
      Object.entries(fm.token_rates).map(([kind, r]) => [
        kind,
        {
          inputPerMtok: r.input_per_mtok,
          outputPerMtok: r.output_per_mtok,
          cacheReadPerMtok: r.cache_read_per_mtok,
          cacheWritePerMtok: r.cache_write_per_mtok,
        },
      ]),
    ),
    git: gitConfig(fm.git),
    selfReview: fm.self_review,
    reactions: fm.reactions,
    tools: {
      enabled: fm.tools.enabled,
      allowOtherIssues: fm.tools.allow_other_issues,
      maxCommentChars: fm.tools.max_comment_chars,
    },
  };
  issues.push(...otherRules(fm, config));
  return { config, issues };
}

function gitConfig(git: FrontMatter['git']): GitConfig | null {
  if (git === undefined) return null;
  const pr = git.pull_request;
  return {
    baseBranch: git.base_branch.trim(),
    branchTemplate: git.branch,
    remote: git.remote.trim(),
    push: git.push,
    requireChanges: git.require_changes,
    pullRequest: {
      enabled: pr.enabled,
      draft: pr.draft,
      titleTemplate: pr.title,
      bodyTemplate: pr.body,
      labels: pr.labels.map((l) => l.trim()).filter((l) => l !== ''),
      linkIssue: pr.link_issue,
    },
  };
}

/**
 * The usable `worker.ssh_hosts` entries: trimmed, blanks and repeats dropped. A bad
 * entry is an error at its own list position, so the operator sees which line.
 */
function sshHostList(entries: readonly string[], issues: ConfigIssue[]): string[] {
  const hosts: string[] = [];
  entries.forEach((entry, index) => {
    const text = entry.trim();
    if (text === '') return;
    const parsed = parseHostSpec(text);
    if (!parsed.ok) {
      issues.push({
        severity: 'error',
        code: 'worker.ssh_hosts.invalid',
        message: `worker.ssh_hosts: ${parsed.message}`,
        path: ['worker', 'ssh_hosts', index],
      });
      return;
    }
    if (!hosts.includes(text)) hosts.push(text);
  });
  return hosts;
}

/** The `server.allowed_hosts` entries as the server compares them; a bad one is an error at its position. */
function allowedHostList(entries: readonly string[], issues: ConfigIssue[]): string[] {
  const names: string[] = [];
  entries.forEach((entry, index) => {
    if (entry.trim() === '') return;
    const parsed = parseAllowedHost(entry);
    if (!parsed.ok) {
      issues.push({
        severity: 'error',
        code: 'server.allowed_hosts.invalid',
        message: `server.allowed_hosts: ${parsed.message}`,
        path: ['server', 'allowed_hosts', index],
      });
      return;
    }
    if (!names.includes(parsed.name)) names.push(parsed.name);
  });
  return names;
}

function recordAt(fm: FrontMatter, key: string): Record<string, unknown> {
  if (key === '') return {};
  const value = (fm as Record<string, unknown>)[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? { ...(value as Record<string, unknown>) }
    : {};
}

function lowerSet(states: readonly string[]): Set<string> {
  return new Set(states.map((s) => s.toLowerCase()));
}

/**
 * A token written into the file itself rather than named by a variable: WORKFLOW.md is usually
 * committed, so everyone who can read the repository holds the token. The message never
 * repeats the value.
 */
function literalToken(raw: string): ConfigIssue | null {
  if (raw.trim() === '') return null;
  const expanded = expandAll(raw, {});
  if (!expanded.ok || expanded.names.length > 0) return null;
  return {
    severity: 'warning',
    code: 'tracker.api_key.literal',
    message:
      'tracker.api_key holds the token itself, so anyone who can read WORKFLOW.md has it: write the name of an environment variable that holds it ($NAME) and export that variable',
    path: ['tracker', 'api_key'],
  };
}

/** A blank required label matches no label, so no issue could ever be dispatched. */
function blankLabels(labels: readonly string[]): ConfigIssue[] {
  return labels.flatMap((label, index) =>
    label === ''
      ? [
          {
            severity: 'warning' as const,
            code: 'tracker.required_labels.blank',
            message:
              'tracker.required_labels holds a blank label, which no issue carries: no issue will be dispatched until it is removed',
            path: ['tracker', 'required_labels', index],
          },
        ]
      : [],
  );
}

/** The rules that keep the state machine sane: no state both active and terminal, and so on. */
function stateRules(t: ServiceConfig['tracker'], kindMissing: boolean): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (kindMissing) {
    issues.push({
      severity: 'error',
      code: 'tracker.kind.missing',
      message: 'tracker.kind is required (for example "file")',
      path: ['tracker', 'kind'],
    });
  }
  const active = lowerSet(t.activeStates);
  const terminal = lowerSet(t.terminalStates);
  // An empty list once meant "every non-terminal state": a handed-off or blocked issue was
  // then dispatched again at once, in a loop. The states to work on must be named.
  if (active.size === 0) {
    issues.push({
      severity: 'error',
      code: 'tracker.active_states.missing',
      message:
        'tracker.active_states is missing or empty: list the states an issue must be in to be dispatched (for example [Todo, In Progress])',
      path: ['tracker', 'active_states'],
    });
  }
  const overlap = [...active].filter((s) => terminal.has(s));
  if (overlap.length > 0) {
    issues.push({
      severity: 'error',
      code: 'tracker.states.overlap',
      message: `states both active and terminal: ${overlap.join(', ')}`,
      path: ['tracker', 'terminal_states'],
    });
  }
  const dupes = (list: string[], key: string) => {
    const seen = new Set<string>();
    list.forEach((s, i) => {
      if (seen.has(s.toLowerCase()))
        issues.push({
          severity: 'warning',
          code: `tracker.${key}.duplicate`,
          message: `state "${s}" is listed twice`,
          path: ['tracker', key, i],
        });
      seen.add(s.toLowerCase());
    });
  };
  dupes(t.activeStates, 'active_states');
  dupes(t.terminalStates, 'terminal_states');
  const handoff = t.handoffState?.toLowerCase();
  if (handoff !== undefined && (active.has(handoff) || terminal.has(handoff))) {
    issues.push({
      severity: 'error',
      code: 'tracker.handoff_state.collision',
      message: `tracker.handoff_state "${t.handoffState}" must be neither an active nor a terminal state`,
      path: ['tracker', 'handoff_state'],
    });
  }
  const inProgress = t.inProgressState?.toLowerCase();
  if (inProgress !== undefined) {
    if (!active.has(inProgress)) {
      issues.push({
        severity: 'error',
        code: 'tracker.in_progress_state.not_active',
        message: `tracker.in_progress_state "${t.inProgressState}" must be one of tracker.active_states`,
        path: ['tracker', 'in_progress_state'],
      });
    }
    if (terminal.has(inProgress) || inProgress === handoff) {
      issues.push({
        severity: 'error',
        code: 'tracker.in_progress_state.collision',
        message: `tracker.in_progress_state "${t.inProgressState}" collides with a terminal or handoff state`,
        path: ['tracker', 'in_progress_state'],
      });
    }
  }
  const blocked = t.blockedState?.toLowerCase();
  if (blocked !== undefined && active.has(blocked)) {
    issues.push({
      severity: 'error',
      code: 'tracker.blocked_state.collision',
      message: `tracker.blocked_state "${t.blockedState}" is an active state, so a blocked issue would be dispatched again`,
      path: ['tracker', 'blocked_state'],
    });
  }
  if (blocked !== undefined && terminal.has(blocked)) {
    issues.push({
      severity: 'warning',
      code: 'tracker.blocked_state.terminal',
      message: `tracker.blocked_state "${t.blockedState}" is terminal: a blocked issue's workspace will be cleaned`,
      path: ['tracker', 'blocked_state'],
    });
  }
  return issues;
}

function otherRules(fm: FrontMatter, config: ServiceConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (config.agent.command !== null) {
    const split = splitCommandLine(config.agent.command);
    if (!split.ok) {
      issues.push({
        severity: 'error',
        code: 'agent.command.quoting',
        message: `agent.command cannot be split into words: ${split.message}`,
        path: ['agent', 'command'],
      });
    }
  }
  if (net.isIP(config.server.host) === 0) {
    issues.push({
      severity: 'error',
      code: 'server.host.invalid',
      message: `server.host must be an IP address, got "${config.server.host}"`,
      path: ['server', 'host'],
    });
  } else if (
    !isLoopbackAddress(config.server.host) &&
    config.server.port !== 0 &&
    config.server.allowedHosts.length === 0
  ) {
    issues.push({
      severity: 'warning',
      code: 'server.host.exposed',
      message: `server.host ${config.server.host} lets other machines reach the HTTP API, which has no authentication, and answers any Host name (DNS rebinding): list the names clients use in server.allowed_hosts, or bind 127.0.0.1 behind a proxy`,
      path: ['server', 'host'],
    });
  }
  const unbounded = unboundedContinuation(config);
  if (unbounded !== null) issues.push(unbounded);
  if (fm.self_review.enabled && (fm.self_review.verification_commands ?? []).length === 0) {
    issues.push({
      severity: 'error',
      code: 'self_review.verification_commands.missing',
      message: 'self_review.enabled needs at least one verification command',
      path: ['self_review', 'verification_commands'],
    });
  }
  if (config.worker.maxConcurrentAgentsPerHost > 0 && config.worker.sshHosts.length === 0) {
    issues.push({
      severity: 'warning',
      code: 'worker.max_concurrent_agents_per_host.unused',
      message: 'worker.max_concurrent_agents_per_host has no effect without worker.ssh_hosts',
      path: ['worker', 'max_concurrent_agents_per_host'],
    });
  }
  if (config.worker.sshStrictHostKeyChecking === 'no' && config.worker.sshHosts.length > 0) {
    issues.push({
      severity: 'warning',
      code: 'worker.ssh_strict_host_key_checking.no',
      message:
        'worker.ssh_strict_host_key_checking is "no": any host key is accepted, so a machine posing as a worker host would receive the agent\'s credentials and code (use accept-new)',
      path: ['worker', 'ssh_strict_host_key_checking'],
    });
  }
  issues.push(...gitRules(config), ...reactionRules(fm, config));
  if (fm.ci_feedback !== undefined) {
    issues.push({
      severity: 'warning',
      code: 'ci_feedback.deprecated',
      message:
        fm.reactions.ci_failure !== undefined
          ? 'ci_feedback is ignored because reactions.ci_failure is set'
          : 'ci_feedback is deprecated: use reactions.ci_failure',
      path: ['ci_feedback'],
    });
  }
  return issues;
}

/** The reaction kinds this build acts on. */
export const REACTION_KINDS = ['ci_failure', 'review_comments', 'merge_conflict', 'auto_merge'] as const;

function gitRules(config: ServiceConfig): ConfigIssue[] {
  const git = config.git;
  if (git === null) return [];
  const issues: ConfigIssue[] = [];
  if (git.baseBranch === '' || git.baseBranch.startsWith('-')) {
    issues.push({
      severity: 'error',
      code: 'git.base_branch.invalid',
      message: `git.base_branch must name a branch, got "${git.baseBranch}"`,
      path: ['git', 'base_branch'],
    });
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(git.remote)) {
    issues.push({
      severity: 'error',
      code: 'git.remote.invalid',
      message: `git.remote must be the name of a remote of the workspace's clone (like "origin"), got "${git.remote}"`,
      path: ['git', 'remote'],
    });
  }
  if (config.worker.sshHosts.length > 0) {
    issues.push({
      severity: 'error',
      code: 'git.ssh_hosts.unsupported',
      message:
        'git: works on workspaces of this machine only in this version; with worker.ssh_hosts, push from an after_run hook instead',
      path: ['git'],
    });
  }
  return issues;
}

function reactionRules(fm: FrontMatter, config: ServiceConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const kinds = Object.keys(fm.reactions);
  for (const kind of kinds) {
    if (!(REACTION_KINDS as readonly string[]).includes(kind)) {
      issues.push({
        severity: 'warning',
        code: 'reactions.unknown_kind',
        message: `reactions.${kind} is not a reaction this build knows (${REACTION_KINDS.join(', ')}): it is ignored`,
        path: ['reactions', kind],
      });
      continue;
    }
    const reaction = fm.reactions[kind];
    if (reaction !== undefined && reaction.poll_interval_ms < 10_000) {
      issues.push({
        severity: 'warning',
        code: 'reactions.poll_interval_ms.low',
        message: `reactions.${kind}.poll_interval_ms is ${reaction.poll_interval_ms}: every poll reads the forge three times per watched pull request, which spends its rate limit fast`,
        path: ['reactions', kind, 'poll_interval_ms'],
      });
    }
  }
  const doneState = fm.reactions.auto_merge?.done_state?.trim();
  if (
    doneState !== undefined &&
    doneState !== '' &&
    !config.tracker.terminalStates.some((s) => s.toLowerCase() === doneState.toLowerCase())
  ) {
    issues.push({
      severity: 'error',
      code: 'reactions.auto_merge.done_state.not_terminal',
      message: `reactions.auto_merge.done_state "${doneState}" is not one of tracker.terminal_states`,
      path: ['reactions', 'auto_merge', 'done_state'],
    });
  }
  const known = kinds.filter((k) => (REACTION_KINDS as readonly string[]).includes(k));
  const git = config.git;
  if (known.length > 0 && (git === null || !git.push || !git.pullRequest.enabled)) {
    issues.push({
      severity: 'warning',
      code: 'reactions.no_pull_request',
      message:
        'reactions watch the pull requests the orchestrator opens: without a git: block that pushes and opens them (git.push, git.pull_request.enabled) they never act',
      path: ['reactions'],
    });
  }
  return issues;
}

/**
 * Without a handoff state an issue the agent finishes stays active, so it is continued and
 * dispatched again for as long as it stays so; without a budget nothing caps what that costs.
 * Only the no-progress cap (agent.max_unchanged_sessions) stops it then, or nothing when that
 * is 0. Placed at the tracker block, where the handoff state belongs.
 */
function unboundedContinuation(config: ServiceConfig): ConfigIssue | null {
  const { agent, tracker } = config;
  if (tracker.handoffState !== null) return null;
  if (agent.maxSessions > 0 || agent.maxTokens > 0 || agent.maxCostUsd > 0) return null;
  const stop =
    agent.maxUnchangedSessions > 0
      ? `only agent.max_unchanged_sessions stops it, after ${agent.maxUnchangedSessions} sessions in a row that leave its state as it was`
      : 'nothing stops it (agent.max_unchanged_sessions is 0)';
  return {
    severity: 'warning',
    code: 'tracker.handoff_state.unbounded',
    message: `no tracker.handoff_state and no budget (agent.max_sessions, agent.max_tokens, agent.max_cost_usd): an issue the agent finishes stays active and is run again and again unless the agent moves it; ${stop}. Set tracker.handoff_state to where finished work goes, or a budget`,
    path: ['tracker', 'handoff_state'],
  };
}
