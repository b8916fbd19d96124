/**
 * The `opencode:` block. An unattended run must never wait for a person, so a
 * permission rule whose action is `ask` is refused here, at validate time: in
 * `opencode run` such a rule rejects the tool call on the spot, which an operator
 * who wrote `ask` did not mean either. The block's rules reach the CLI through
 * `OPENCODE_PERMISSION`, which OpenCode applies over every config file it reads,
 * so a workspace's own opencode.json cannot loosen or tighten what the workflow
 * chose. The rest of OpenCode's configuration (providers, models, MCP servers,
 * instructions) is the block's `config` map, given to the CLI inline; the keys the
 * orchestrator itself decides (update checks, sharing, permissions) are refused
 * there, so no workflow can switch them back on by accident.
 */
import { z } from 'zod';
import type { ConfigIssue } from '../../domain/diagnostic.js';
import { defineBlock } from '../config-block.js';

/** OpenCode's permission actions; `ask` waits for a person, so the block refuses it. */
const ACTIONS = ['allow', 'deny', 'ask'] as const;
export type PermissionAction = Exclude<(typeof ACTIONS)[number], 'ask'>;
/** One tool's rule: an action for every call, or actions by pattern (`"git *": allow`). */
export type PermissionRule = PermissionAction | Record<string, PermissionAction>;
export type PermissionPolicy = Record<string, PermissionRule>;

/**
 * The posture when the block sets none: the shell and file edits run without asking,
 * and the two rules OpenCode asks about by default are decided up front: work outside
 * the workspace is refused, and so is a call the model keeps repeating (`doom_loop`),
 * which makes it change course instead of looping until the turn times out.
 */
export const DEFAULT_PERMISSION: Readonly<PermissionPolicy> = Object.freeze({
  bash: 'allow',
  edit: 'allow',
  webfetch: 'allow',
  external_directory: 'deny',
  doom_loop: 'deny',
});

/** Keys of OpenCode's own config the orchestrator sets on every launch. */
export const MANAGED_CONFIG_KEYS: readonly string[] = ['autoupdate', 'share', 'permission'];

/** `provider/model`, as `opencode run -m` takes it. */
const MODEL_ID = /^[^/\s]+\/\S+$/;

export interface OpencodeConfig {
  /** `-m provider/model`; null = what the inline config (or OpenCode) chooses. */
  model: string | null;
  /** `--agent`: a primary agent by name; null = OpenCode's default (`build`). */
  agent: string | null;
  /** `--variant`: the model's reasoning variant (`high`, `max`, `minimal`…); null = the model's default. */
  variant: string | null;
  /** The rules sent as `OPENCODE_PERMISSION`. */
  permission: PermissionPolicy;
  /** OpenCode config given inline (`OPENCODE_CONFIG_CONTENT`), managed keys aside. */
  config: Record<string, unknown>;
}

const isAction = (v: unknown): v is (typeof ACTIONS)[number] =>
  typeof v === 'string' && (ACTIONS as readonly string[]).includes(v);

/** Problems with one tool's rule: an action, or a map of patterns to actions. */
function ruleIssues(tool: string, rule: unknown): ConfigIssue[] {
  const path = ['opencode', 'permission', tool];
  const at = path.join('.');
  const interactive = (where: string, p: (string | number)[]): ConfigIssue => ({
    severity: 'error',
    code: 'opencode.permission.interactive',
    message: `${where} is "ask", which waits for a person (opencode run rejects the call instead); use allow or deny`,
    path: p,
  });
  const unsupported = (where: string, p: (string | number)[]): ConfigIssue => ({
    severity: 'error',
    code: 'opencode.permission.unsupported',
    message: `${where} must be allow or deny, or a map of patterns to allow or deny`,
    path: p,
  });
  if (isAction(rule)) return rule === 'ask' ? [interactive(at, path)] : [];
  if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) return [unsupported(at, path)];
  const issues: ConfigIssue[] = [];
  for (const [pattern, action] of Object.entries(rule)) {
    const where = `${at}["${pattern}"]`;
    if (!isAction(action)) issues.push(unsupported(where, [...path, pattern]));
    else if (action === 'ask') issues.push(interactive(where, [...path, pattern]));
  }
  return issues;
}

function refine(v: {
  permission?: Record<string, unknown> | undefined;
  config?: Record<string, unknown> | undefined;
}): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const [tool, rule] of Object.entries(v.permission ?? {})) issues.push(...ruleIssues(tool, rule));
  for (const key of MANAGED_CONFIG_KEYS) {
    if (v.config === undefined || !Object.hasOwn(v.config, key)) continue;
    issues.push({
      severity: 'error',
      code: 'opencode.config.managed_key',
      message:
        key === 'permission'
          ? 'opencode.config.permission is set by the orchestrator; write the rules under opencode.permission'
          : `opencode.config.${key} is set by the orchestrator (update checks and sharing stay off); remove it`,
      path: ['opencode', 'config', key],
    });
  }
  return issues;
}

/** Parser of the `opencode:` block. */
export const opencodeBlock = defineBlock(
  'opencode',
  z.object({
    model: z.string().min(1).regex(MODEL_ID, 'must be provider/model, e.g. openai/gpt-5.1').optional(),
    agent: z.string().min(1).optional(),
    variant: z.string().min(1).optional(),
    permission: z.record(z.string(), z.unknown()).optional(),
    config: z.record(z.string(), z.unknown()).optional(),
  }),
  (v): OpencodeConfig => ({
    model: v.model ?? null,
    agent: v.agent ?? null,
    variant: v.variant ?? null,
    // Only allow/deny rules get here: the refinement refuses everything else.
    permission: (v.permission as PermissionPolicy | undefined) ?? { ...DEFAULT_PERMISSION },
    config: v.config ?? {},
  }),
  refine,
);
