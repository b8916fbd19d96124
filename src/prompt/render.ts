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

/**
 * Sent on a continuation turn instead of a template that does not read `run.is_continuation`
 * (the thread already holds the task), and when a continuation render comes out blank, so the
 * agent is never handed "".
 */
export const DEFAULT_CONTINUATION_PROMPT =
  'Continue working on the issue from where you left off; the task is earlier in this conversation. ' +
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
 * The prompt for one turn, called by the worker before each turn. A first turn is the render
 * (blank included: the caller decides what that means). A continuation turn is
 * `DEFAULT_CONTINUATION_PROMPT` when the template leaves continuations to the built-in
 * guidance or renders blank, else the render.
 */
export function turnPrompt(template: PromptTemplate, vars: PromptVariables): RenderResult {
  if (vars.run.is_continuation && template.continuation === 'guidance') {
    return { ok: true, text: DEFAULT_CONTINUATION_PROMPT };
  }
  const rendered = renderPrompt(template, vars);
  if (rendered.ok && vars.run.is_continuation && rendered.text.trim() === '') {
    return { ok: true, text: DEFAULT_CONTINUATION_PROMPT };
  }
  return rendered;
}
