/**
 * Renders a compiled prompt for one turn. Rendering is where strict variables bite, so a typo
 * such as `issue.titel` becomes a diagnostic naming the variable and its line in WORKFLOW.md,
 * not an exception and not a silently empty prompt sent to an agent.
 */

import type { Diagnostic } from '../domain/diagnostic.js';
import { diagnosticsFromError } from './diagnose.js';
import type { PromptTemplate } from './template.js';
import type { PromptVariables } from './variables.js';

/** Outcome of a render: the prompt text, or diagnostics positioned in the original file. */
export type RenderResult = { ok: true; text: string } | { ok: false; diagnostics: Diagnostic[] };

/** Sent on a continuation turn whose template renders to nothing, so the agent is never handed "". */
export const DEFAULT_CONTINUATION_PROMPT =
  'Continue working on the issue from where you left off. ' +
  'When the work is complete, finish with a final message summarising what you did.';

/** Renders the template with the given variables; never throws. */
export function renderPrompt(template: PromptTemplate, vars: PromptVariables): RenderResult {
  try {
    const text: unknown = template.engine.renderSync(template.parsed, vars);
    return { ok: true, text: typeof text === 'string' ? text : String(text) };
  } catch (err) {
    return { ok: false, diagnostics: diagnosticsFromError(err, template.origin, 'render') };
  }
}

/**
 * The prompt for one turn: the render, or `DEFAULT_CONTINUATION_PROMPT` when a continuation turn
 * renders blank. A blank first turn is returned as is (the caller decides what that means).
 */
export function turnPrompt(template: PromptTemplate, vars: PromptVariables): RenderResult {
  const rendered = renderPrompt(template, vars);
  if (rendered.ok && vars.run.is_continuation && rendered.text.trim() === '') {
    return { ok: true, text: DEFAULT_CONTINUATION_PROMPT };
  }
  return rendered;
}
