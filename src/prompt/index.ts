/**
 * The prompt layer's public surface: compile the WORKFLOW.md prompt body once, render it per
 * turn, and check it at validate time. Callers import from here, not from the files behind it.
 */

export { renderBounded, turnPromptBounded } from './bounded-render.js';
export { checkTemplate } from './check.js';
export { type ContinuationSource, continuationSource } from './continuation.js';
export { type PromptOrigin, translatePosition } from './diagnose.js';
export { LOOP_RENDER_LIMITS, type RenderLimits, RUN_RENDER_LIMITS } from './engine.js';
export { DEFAULT_CONTINUATION_PROMPT, type RenderResult, renderPrompt, turnPrompt } from './render.js';
export { type CompileResult, compilePrompt, type PromptTemplate } from './template.js';
export {
  PROMPT_VARIABLE_NAMES,
  type PromptVariables,
  type PromptVariablesInput,
  promptVariables,
  SAMPLE_ISSUE,
} from './variables.js';
