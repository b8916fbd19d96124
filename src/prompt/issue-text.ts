/**
 * One-off templates beside the prompt (a branch name, a pull request's title and body): the
 * same engine, variables and limits as the prompt, rendered on the calling thread. They are
 * short, so the event-loop limits apply, with the patient retry a busy machine needs.
 */
import type { Diagnostic } from '../domain/diagnostic.js';
import type { PromptOrigin } from './diagnose.js';
import { type RenderResult, renderPatiently } from './render.js';
import { compilePrompt } from './template.js';
import type { PromptVariables } from './variables.js';

/** Renders `source` with `vars`; a parse or render problem comes back as diagnostics, never thrown. */
export function renderText(source: string, vars: PromptVariables, origin: PromptOrigin): RenderResult {
  const compiled = compilePrompt(source, origin);
  if (!compiled.ok) return compiled;
  return renderPatiently(compiled.template, vars);
}

/** The first problem's message, for a log line or a coded error. */
export function firstProblem(diagnostics: readonly Diagnostic[]): string {
  return diagnostics[0]?.message ?? 'the template could not be rendered';
}
