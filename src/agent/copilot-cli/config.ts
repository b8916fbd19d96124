/**
 * The `copilot-cli:` block. A run is unattended, so nothing here may leave the
 * CLI waiting for a person: every turn passes `--no-ask-user`, the agent mode is
 * always passed explicitly (so a saved user setting cannot switch it), and plan
 * mode, which stops until someone approves the plan, is refused at validate time.
 * The default posture is autopilot with every tool allowed (`--allow-all-tools`);
 * a block that turns that off keeps the tools it lists. In `-p` mode Copilot
 * refuses a tool nobody allowed instead of asking, so a narrow list narrows what
 * the agent can do; it never makes the run wait.
 */
import { z } from 'zod';
import type { ConfigIssue } from '../../domain/diagnostic.js';
import { defineBlock } from '../config-block.js';

/** Copilot's agent modes (`--mode`). */
const MODES = ['autopilot', 'interactive', 'plan'] as const;
export type CopilotMode = Exclude<(typeof MODES)[number], 'plan'>;
/** Copilot's reasoning levels (`--reasoning-effort`). */
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

const toolList = z.array(z.string().min(1));

export interface CopilotCliConfig {
  /** `--mode`: autopilot (the default) keeps working until the agent reports the task complete. */
  mode: CopilotMode;
  /** `--max-autopilot-continues`; null = the CLI's default (5). Only read in autopilot mode. */
  maxAutopilotContinues: number | null;
  model: string | null;
  /** `--agent`: a custom agent by name. */
  agent: string | null;
  /** Forwarded as `--reasoning-effort` on every turn; null = the CLI's default. */
  effort: string | null;
  /** `--allow-all-tools`: true by default; false leaves only `allowedTools` approved. */
  allowAllTools: boolean;
  /** Permission patterns approved without asking (`--allow-tool`), e.g. `shell(git:*)`, `write`. */
  allowedTools: string[];
  /** Permission patterns always refused (`--deny-tool`); they win over every allow. */
  deniedTools: string[];
  /** The only tools the model sees (`--available-tools`); [] = all of them. */
  availableTools: string[];
  /** Tools the model never sees (`--excluded-tools`). */
  excludedTools: string[];
  /** `--allow-all-paths`: file access outside the workspace (and the temp folder). */
  allowAllPaths: boolean;
  /** `--allow-all-urls`: URL access without a pattern list. */
  allowAllUrls: boolean;
}

function overlap(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((t) => b.includes(t));
}

/** Parser of the `copilot-cli:` block. */
export const copilotCliBlock = defineBlock(
  'copilot-cli',
  z.object({
    mode: z.enum(MODES).default('autopilot'),
    max_autopilot_continues: z.number().int().min(0).optional(),
    model: z.string().min(1).optional(),
    agent: z.string().min(1).optional(),
    effort: z.enum(EFFORTS).optional(),
    allow_all_tools: z.boolean().default(true),
    allowed_tools: toolList.default([]),
    denied_tools: toolList.default([]),
    available_tools: toolList.default([]),
    excluded_tools: toolList.default([]),
    allow_all_paths: z.boolean().default(false),
    allow_all_urls: z.boolean().default(false),
  }),
  (v): CopilotCliConfig => ({
    // `plan` never gets here: the refinement below refuses it.
    mode: v.mode === 'plan' ? 'interactive' : v.mode,
    maxAutopilotContinues: v.max_autopilot_continues ?? null,
    model: v.model ?? null,
    agent: v.agent ?? null,
    effort: v.effort ?? null,
    allowAllTools: v.allow_all_tools,
    allowedTools: v.allowed_tools,
    deniedTools: v.denied_tools,
    availableTools: v.available_tools,
    excludedTools: v.excluded_tools,
    allowAllPaths: v.allow_all_paths,
    allowAllUrls: v.allow_all_urls,
  }),
  (v) => {
    const issues: ConfigIssue[] = [];
    if (v.mode === 'plan') {
      issues.push({
        severity: 'error',
        code: 'copilot-cli.mode.needs_approval',
        message:
          'copilot-cli.mode "plan" stops until a person approves the plan, and nobody is there in an unattended run; use autopilot (the default) or interactive',
        path: ['copilot-cli', 'mode'],
      });
    }
    const allowedAndDenied = overlap(v.allowed_tools, v.denied_tools);
    if (allowedAndDenied.length > 0) {
      issues.push({
        severity: 'error',
        code: 'copilot-cli.tools.overlap',
        message: `tools both allowed and denied: ${allowedAndDenied.join(', ')}`,
        path: ['copilot-cli', 'denied_tools'],
      });
    }
    const shownAndHidden = overlap(v.available_tools, v.excluded_tools);
    if (shownAndHidden.length > 0) {
      issues.push({
        severity: 'error',
        code: 'copilot-cli.tools.overlap',
        message: `tools both available and excluded: ${shownAndHidden.join(', ')}`,
        path: ['copilot-cli', 'excluded_tools'],
      });
    }
    if (v.max_autopilot_continues !== undefined && v.mode !== 'autopilot') {
      issues.push({
        severity: 'warning',
        code: 'copilot-cli.max_autopilot_continues.unused',
        message: `copilot-cli.max_autopilot_continues only applies in autopilot mode, not "${v.mode}"`,
        path: ['copilot-cli', 'max_autopilot_continues'],
      });
    }
    return issues;
  },
);
