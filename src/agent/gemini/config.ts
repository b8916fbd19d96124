/**
 * The `gemini:` block. An unattended run must never wait for a person, so the
 * approval modes that exist to ask one (`default`, and `plan`, which asks before
 * it leaves its read-only mode) are refused here, at validate time; `yolo` is the
 * default. The retry cap exists because Gemini CLI's own default (ten attempts
 * with growing backoff) lets one overloaded model hold a turn for minutes before
 * the orchestrator's retry policy ever sees the failure.
 */
import { z } from 'zod';
import type { ConfigIssue } from '../../domain/diagnostic.js';
import { defineBlock } from '../config-block.js';

const APPROVAL_MODES = ['yolo', 'auto_edit', 'default', 'plan'] as const;
/** Modes in which the CLI would stop for a human decision. */
const INTERACTIVE_MODES: readonly string[] = ['default', 'plan'];
const AUTH_TYPES = ['gemini-api-key', 'vertex-ai', 'oauth-personal', 'compute-default-credentials'] as const;

/** Model calls per request the CLI makes when the block names none, the first included. */
export const DEFAULT_MAX_ATTEMPTS = 3;
/** The largest cap the block accepts: the CLI's own default, whose backoff already runs for minutes. */
export const MAX_MAX_ATTEMPTS = 10;

export type GeminiApprovalMode = (typeof APPROVAL_MODES)[number];
export type GeminiAuthType = (typeof AUTH_TYPES)[number];

export interface GeminiConfig {
  /** Passed as `-m`; null = the CLI's own choice (its `auto` routing). */
  model: string | null;
  approvalMode: GeminiApprovalMode;
  /** `general.maxAttempts` of the managed settings: calls per model request, the first included. */
  maxAttempts: number;
  /** `security.auth.selectedType` of the managed settings. */
  authType: GeminiAuthType;
  /** Folder the Google-login credential is copied from; null = `~/.gemini`. */
  credentialsHome: string | null;
}

function refine(v: { approval_mode: string }): ConfigIssue[] {
  if (!INTERACTIVE_MODES.includes(v.approval_mode)) return [];
  return [
    {
      severity: 'error',
      code: 'gemini.approval_mode.interactive',
      message: `gemini.approval_mode "${v.approval_mode}" stops to ask a person; use yolo (the default) or auto_edit`,
      path: ['gemini', 'approval_mode'],
    },
  ];
}

/** Parser of the `gemini:` block. */
export const geminiBlock = defineBlock(
  'gemini',
  z.object({
    model: z.string().min(1).optional(),
    approval_mode: z.enum(APPROVAL_MODES).default('yolo'),
    max_attempts: z.number().int().min(1).max(MAX_MAX_ATTEMPTS).default(DEFAULT_MAX_ATTEMPTS),
    auth_type: z.enum(AUTH_TYPES).default('gemini-api-key'),
    credentials_home: z.string().min(1).optional(),
  }),
  (v): GeminiConfig => ({
    model: v.model ?? null,
    approvalMode: v.approval_mode,
    maxAttempts: v.max_attempts,
    authType: v.auth_type,
    credentialsHome: v.credentials_home ?? null,
  }),
  refine,
);
