/**
 * Renders a compiled prompt for one turn. Rendering is where strict variables bite, so a typo
 * such as `issue.titel` becomes a diagnostic naming the variable and its line in WORKFLOW.md,
 * not an exception and not a silently empty prompt sent to an agent.
 */

import type { Diagnostic } from '../domain/diagnostic.js';
import { diagnosticsFromError, RENDER_LIMIT_CODE } from './diagnose.js';
import { LOOP_RENDER_LIMITS, type RenderLimits } from './engine.js';
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

/**
 * Renders the template with the given variables on the calling thread, within `limits` (by
 * default those fit for the event loop); never throws. A turn's prompt goes through
 * `turnPromptBounded`, which moves a render that needs more to the render thread.
 */
export function renderPrompt(
  template: PromptTemplate,
  vars: PromptVariables,
  limits: RenderLimits = LOOP_RENDER_LIMITS,
): RenderResult {
  try {
    const text: unknown = template.engine.renderSync(template.parsed, vars, {
      renderLimit: limits.timeMs,
      memoryLimit: limits.memoryUnits,
    });
    return { ok: true, text: typeof text === 'string' ? text : String(text) };
  } catch (err) {
    return { ok: false, diagnostics: diagnosticsFromError(err, template.origin, 'render', limits) };
  }
}

/**
 * The prompt for one turn, called by the worker before each turn. A first turn is the render
 * (blank included: the caller decides what that means). A continuation turn is
 * `DEFAULT_CONTINUATION_PROMPT` when the template leaves continuations to the built-in
 * guidance or renders blank, else the render.
 */
export function turnPrompt(template: PromptTemplate, vars: PromptVariables): RenderResult {
  if (sendsGuidance(template, vars)) return { ok: true, text: DEFAULT_CONTINUATION_PROMPT };
  return blankContinuationAsGuidance(renderPrompt(template, vars), vars);
}

/** True when a continuation turn sends the built-in guidance without rendering. */
export function sendsGuidance(template: PromptTemplate, vars: PromptVariables): boolean {
  return vars.run.is_continuation && template.continuation === 'guidance';
}

/** A continuation render that came out blank becomes the guidance, so the agent is never sent "". */
export function blankContinuationAsGuidance(rendered: RenderResult, vars: PromptVariables): RenderResult {
  if (rendered.ok && vars.run.is_continuation && rendered.text.trim() === '') {
    return { ok: true, text: DEFAULT_CONTINUATION_PROMPT };
  }
  return rendered;
}

/**
 * The limits of a render done on the calling thread that must not fail for a busy machine:
 * the event loop's, then, for a render that ran out of time only, one more try with more time.
 * A loaded machine (a CI runner) can take longer than the loop's 50 ms for a template that is
 * fine; a runaway one still stops, after at most the two limits together.
 */
export const PATIENT_RENDER_LIMITS: { first: RenderLimits; retry: RenderLimits } = {
  first: LOOP_RENDER_LIMITS,
  retry: { ...LOOP_RENDER_LIMITS, timeMs: 1_000 },
};

/** `renderPrompt` within `limits.first`, tried again within `limits.retry` when it ran out of time only. */
export function renderPatiently(
  template: PromptTemplate,
  vars: PromptVariables,
  limits: { first: RenderLimits; retry: RenderLimits } = PATIENT_RENDER_LIMITS,
): RenderResult {
  const first = renderPrompt(template, vars, limits.first);
  if (first.ok || !first.diagnostics.some((d) => d.code === RENDER_LIMIT_CODE)) return first;
  return renderPrompt(template, vars, limits.retry);
}
