/**
 * The `codex:` block. Approval policies that wait for a person are allowed only
 * because the client answers every approval request by policy; `config` holds raw
 * `-c key=value` overrides passed through untouched.
 */
import { z } from 'zod';
import { defineBlock } from '../config-block.js';

export interface CodexConfig {
  model: string | null;
  effort: string | null;
  approvalPolicy: 'untrusted' | 'on-failure' | 'on-request' | 'never';
  sandbox: 'read-only' | 'workspace-write' | 'danger-full-access';
  /** Extra `-c key=value` overrides, in file order. */
  configOverrides: Record<string, string | number | boolean>;
  /** Directory holding credentials to copy into the managed CODEX_HOME; null = none. */
  credentialsHome: string | null;
  /** Folder the managed CODEX_HOMEs are made in; null = `$XDG_STATE_HOME/orchestrator/codex-homes`. */
  homeRoot: string | null;
}

/** Parser of the `codex:` block. */
export const codexBlock = defineBlock(
  'codex',
  z.object({
    model: z.string().min(1).optional(),
    effort: z.enum(['minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
    approval_policy: z.enum(['untrusted', 'on-failure', 'on-request', 'never']).default('never'),
    sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).default('workspace-write'),
    config: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
    credentials_home: z.string().min(1).optional(),
    home_root: z.string().min(1).optional(),
  }),
  (v): CodexConfig => ({
    model: v.model ?? null,
    effort: v.effort ?? null,
    approvalPolicy: v.approval_policy,
    sandbox: v.sandbox,
    configOverrides: v.config,
    credentialsHome: v.credentials_home ?? null,
    homeRoot: v.home_root ?? null,
  }),
);
