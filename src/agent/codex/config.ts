/**
 * The `codex:` block. Approval policies that wait for a person are allowed only
 * because the client answers every approval request by policy; `config` holds raw
 * `-c key=value` overrides passed through untouched.
 *
 * Files written for Symphony or Sortie run unchanged: their `thread_sandbox` is read as
 * `sandbox` (camelCase modes such as `workspaceWrite` included), an object
 * `approval_policy` (Codex's structured form) and `turn_sandbox_policy` reach the
 * app-server exactly as written, and the keys this build has no use for are reported.
 */
import { z } from 'zod';
import { defineBlock } from '../config-block.js';

const APPROVAL_POLICIES = ['untrusted', 'on-failure', 'on-request', 'never'] as const;
const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;

/** A named policy, or Codex's structured one (for example `{ reject: { … } }`), sent as written. */
export type CodexApprovalPolicy = (typeof APPROVAL_POLICIES)[number] | Record<string, unknown>;

export interface CodexConfig {
  model: string | null;
  effort: string | null;
  approvalPolicy: CodexApprovalPolicy;
  sandbox: (typeof SANDBOX_MODES)[number];
  /** Sent as `sandboxPolicy` with every `turn/start`, exactly as written; null = Codex's own from `sandbox`. */
  turnSandboxPolicy: Record<string, unknown> | null;
  /** Extra `-c key=value` overrides, in file order. */
  configOverrides: Record<string, string | number | boolean>;
  /** Directory holding credentials to copy into the managed CODEX_HOME; null = none. */
  credentialsHome: string | null;
  /** Folder the managed CODEX_HOMEs are made in; null = `$XDG_STATE_HOME/orchestrator/codex-homes`. */
  homeRoot: string | null;
}

/** `workspaceWrite` → `workspace-write`: the app-server protocol's spelling of a mode, read as the CLI's. */
function kebabMode(value: unknown): unknown {
  return typeof value === 'string'
    ? value
        .trim()
        .replace(/([a-z])([A-Z])/g, '$1-$2')
        .toLowerCase()
    : value;
}

/** Parser of the `codex:` block. */
export const codexBlock = defineBlock(
  'codex',
  z.object({
    model: z.string().min(1).optional(),
    effort: z.enum(['minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
    approval_policy: z.union([z.enum(APPROVAL_POLICIES), z.record(z.string(), z.unknown())]).default('never'),
    sandbox: z.preprocess(kebabMode, z.enum(SANDBOX_MODES).default('workspace-write')),
    turn_sandbox_policy: z.record(z.string(), z.unknown()).optional(),
    config: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    credentials_home: z.string().min(1).optional(),
    home_root: z.string().min(1).optional(),
  }),
  (v): CodexConfig => ({
    model: v.model ?? null,
    effort: v.effort ?? null,
    approvalPolicy: v.approval_policy,
    sandbox: v.sandbox,
    turnSandboxPolicy: v.turn_sandbox_policy ?? null,
    configOverrides: v.config,
    credentialsHome: v.credentials_home ?? null,
    homeRoot: v.home_root ?? null,
  }),
  undefined,
  {
    aliases: { thread_sandbox: { key: 'sandbox', format: 'Symphony/Sortie' } },
    ignored: {
      personality: 'this build does not send a personality to Codex (Sortie)',
      skip_git_repo_check: 'the check is always skipped: workspaces need not be git repositories (Sortie)',
    },
  },
);
