/**
 * The `claude-code:` block. An unattended run must never stop to ask a person,
 * so permission modes that would prompt are refused here, at validate time,
 * instead of hanging (or silently denying every tool) mid-run. The default
 * posture is `acceptEdits` with `Bash` allowed: file edits in the workspace and
 * shell commands run without a prompt, anything else is denied rather than
 * asked about. It also works as root, where Claude Code refuses
 * `bypassPermissions` unless the machine declares itself a sandbox.
 */
import { z } from 'zod';
import { defineBlock } from '../config-block.js';

const PERMISSION_MODES = ['bypassPermissions', 'acceptEdits', 'dontAsk', 'auto', 'default', 'plan'] as const;
/** Modes in which the CLI waits for a human decision. */
const INTERACTIVE_MODES: readonly string[] = ['default', 'plan'];

const toolList = z.array(z.string().min(1));
/** Tools that run without a prompt when the block names none: the shell (edits are accepted by the mode). */
export const DEFAULT_ALLOWED_TOOLS: readonly string[] = ['Bash'];

export interface ClaudeCodeConfig {
  permissionMode: (typeof PERMISSION_MODES)[number];
  model: string | null;
  fallbackModel: string | null;
  /** The CLI's own cap on model round trips per invocation (one orchestrator turn); null = its default. */
  maxTurns: number | null;
  maxBudgetUsd: number | null;
  /** Forwarded as `--effort` on every turn; null = the CLI's default. */
  effort: string | null;
  /** Tools that run without a prompt; `DEFAULT_ALLOWED_TOOLS` when the block names none. */
  allowedTools: string[];
  disallowedTools: string[];
  appendSystemPrompt: string | null;
  /** false passes `--no-session-persistence`, which also makes the session impossible to resume. */
  sessionPersistence: boolean;
}

/** The block key that stops the runtime resuming a session, or null (read from the raw block). */
export function resumeBlockedBy(options: Record<string, unknown>): string | null {
  return options.session_persistence === false ? 'session_persistence' : null;
}

/** Parser of the `claude-code:` block. */
export const claudeCodeBlock = defineBlock(
  'claude-code',
  z.object({
    permission_mode: z.enum(PERMISSION_MODES).default('acceptEdits'),
    model: z.string().min(1).optional(),
    fallback_model: z.string().min(1).optional(),
    max_turns: z.number().int().min(1).optional(),
    max_budget_usd: z.number().positive().optional(),
    effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional(),
    allowed_tools: toolList.optional(),
    disallowed_tools: toolList.default([]),
    append_system_prompt: z.string().optional(),
    session_persistence: z.boolean().default(true),
  }),
  (v): ClaudeCodeConfig => ({
    permissionMode: v.permission_mode,
    model: v.model ?? null,
    fallbackModel: v.fallback_model ?? null,
    maxTurns: v.max_turns ?? null,
    maxBudgetUsd: v.max_budget_usd ?? null,
    effort: v.effort ?? null,
    // The default never contradicts a tool the block disallows.
    allowedTools: v.allowed_tools ?? DEFAULT_ALLOWED_TOOLS.filter((t) => !v.disallowed_tools.includes(t)),
    disallowedTools: v.disallowed_tools,
    appendSystemPrompt: v.append_system_prompt ?? null,
    sessionPersistence: v.session_persistence,
  }),
  (v) => {
    const issues = [];
    if (INTERACTIVE_MODES.includes(v.permission_mode)) {
      issues.push({
        severity: 'error' as const,
        code: 'claude-code.permission_mode.interactive',
        message: `claude-code.permission_mode "${v.permission_mode}" stops to ask a person; use acceptEdits (the default), dontAsk, auto or bypassPermissions`,
        path: ['claude-code', 'permission_mode'],
      });
    }
    const both = (v.allowed_tools ?? []).filter((t) => v.disallowed_tools.includes(t));
    if (both.length > 0) {
      issues.push({
        severity: 'error' as const,
        code: 'claude-code.tools.overlap',
        message: `tools both allowed and disallowed: ${both.join(', ')}`,
        path: ['claude-code', 'disallowed_tools'],
      });
    }
    return issues;
  },
  {
    // Sortie's spelling: it too appends the text to the CLI's own system prompt.
    aliases: { system_prompt: { key: 'append_system_prompt', format: 'Sortie' } },
    ignored: {
      mcp_config:
        "the service writes the agent's tool-server configuration itself; name a file of your own servers in agent.mcp_config, which every kind with a tool channel reads (Sortie)",
    },
  },
);
