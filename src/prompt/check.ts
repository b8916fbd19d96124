/**
 * What `orchestrator validate` runs on the prompt body. Parsing alone misses unknown variables
 * (they only fail at render time), so the template is also rendered against a sample issue on a
 * first turn and on a continuation turn, and every problem is reported with its WORKFLOW.md line.
 */

import type { Diagnostic } from '../domain/diagnostic.js';
import { dedupeDiagnostics, type PromptOrigin, RENDER_LIMIT_CODE } from './diagnose.js';
import { type RenderLimits, STRICT_CONDITION_ENGINE } from './engine.js';
import { SAMPLE_REACTION_VARIABLES } from './reaction-variables.js';
import { PATIENT_RENDER_LIMITS, renderPatiently } from './render.js';
import { compilePrompt, compileWith, type PromptTemplate } from './template.js';
import { type PromptVariables, promptVariables, SAMPLE_ISSUE } from './variables.js';

/** Workspace path shown to the template during validation. */
const SAMPLE_WORKSPACE_PATH = '/var/lib/orchestrator/workspaces/ENG-42';

/** Turn budget shown to the template during validation. */
const SAMPLE_MAX_TURNS = 20;

/** A tool list shown to the template during validation, so a `{% for t in tools %}` loop renders. */
const SAMPLE_TOOLS = [
  {
    server: 'orchestrator',
    name: 'tracker_comment',
    description: 'Post a plain-text comment on your issue.',
  },
];

/** The turns validation renders: a first attempt, and a later attempt's continuation turn. */
function sampleTurns(): PromptVariables[] {
  const base = { issue: SAMPLE_ISSUE, maxTurns: SAMPLE_MAX_TURNS, workspacePath: SAMPLE_WORKSPACE_PATH };
  return [
    promptVariables({ ...base, attempt: 1, turn: 1, tools: SAMPLE_TOOLS }),
    promptVariables({ ...base, attempt: 2, turn: 2 }),
    // A reaction run: every reaction variable filled, so each `{% if ci_failure %}` branch renders.
    promptVariables({ ...base, attempt: 3, turn: 1, reaction: SAMPLE_REACTION_VARIABLES }),
  ];
}

/**
 * Every diagnostic for a prompt body starting at `origin` (deduplicated); [] when it is clean.
 * Errors are what fails at run time. Warnings are unknown names that only a condition, `assign`,
 * `case` or `default` reads: at run time they read as empty, which is almost always a typo.
 */
export function checkTemplate(
  source: string,
  origin: PromptOrigin,
  limits: { first: RenderLimits; retry: RenderLimits } = PATIENT_RENDER_LIMITS,
): Diagnostic[] {
  const compiled = compilePrompt(source, origin);
  if (!compiled.ok) return dedupeDiagnostics(compiled.diagnostics);
  return checkCompiled(compiled.template, limits);
}

/** `checkTemplate` for a prompt already compiled with `compilePrompt`, so loading parses it once. */
export function checkCompiled(
  template: PromptTemplate,
  limits: { first: RenderLimits; retry: RenderLimits } = PATIENT_RENDER_LIMITS,
): Diagnostic[] {
  const { source, origin } = template;
  const errors: Diagnostic[] = [];
  const strictFindings: Diagnostic[] = [];
  const strict = compileWith(STRICT_CONDITION_ENGINE, source, origin);
  for (const vars of sampleTurns()) {
    const rendered = renderPatiently(template, vars, limits);
    if (!rendered.ok) errors.push(...rendered.diagnostics);
    // This runs on the event loop (validate, every reload): a template that hit a limit once
    // is not rendered again, so a runaway one costs one limit, not four.
    if (errors.some((d) => d.code === RENDER_LIMIT_CODE)) break;
    if (strict.ok) {
      const strictRendered = renderPatiently(strict.template, vars, limits);
      if (!strictRendered.ok) strictFindings.push(...strictRendered.diagnostics);
    }
  }

  const errorKeys = new Set(errors.map(placeKey));
  const warnings = strictFindings
    .filter((d) => d.code === 'template.unknown_variable' && !errorKeys.has(placeKey(d)))
    .map(
      (d): Diagnostic => ({
        ...d,
        severity: 'warning',
        message: `${d.message} (in a condition, assign or default it reads as empty at run time)`,
      }),
    );
  return dedupeDiagnostics([...errors, ...warnings]);
}

/** Same problem at the same place, whatever the severity. */
function placeKey(d: Diagnostic): string {
  return JSON.stringify([d.code, d.file, d.line, d.column, d.message]);
}
