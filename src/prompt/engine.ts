/**
 * The two Liquid engines prompts are parsed and rendered with. Strict variables and filters
 * turn a typo into a diagnostic instead of a silently empty prompt; partials are disabled so a
 * prompt can never read files from wherever the orchestrator happens to run.
 */

import { Liquid, type LiquidOptions } from 'liquidjs';

/** Longest a single prompt render may take before it is abandoned as a runaway loop. */
export const PROMPT_RENDER_LIMIT_MS = 5_000;

/** Rough cap (in characters/items, as Liquid counts them) on what one render may allocate. */
export const PROMPT_MEMORY_LIMIT_UNITS = 16 * 1024 * 1024;

const BASE_OPTIONS: LiquidOptions = {
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  // Report every problem in one pass, not just the first.
  catchAllErrors: true,
  // `{% include %}`, `{% render %}` and `{% layout %}` resolve against this empty map, so they fail.
  templates: {},
  renderLimit: PROMPT_RENDER_LIMIT_MS,
  memoryLimit: PROMPT_MEMORY_LIMIT_UNITS,
  // A fixed locale keeps renders identical across machines and skips loading Intl at start-up.
  locale: 'en-US',
};

/**
 * Runtime engine: an undefined name in `if`/`elsif`/`unless`/`case`/`assign` or before `default`
 * reads as empty, so a run never fails on a condition.
 */
export const RUNTIME_ENGINE = new Liquid({ ...BASE_OPTIONS, lenientIf: true });

/**
 * Validate-time engine: the same, but undefined names in conditions are reported too, so
 * `{% if issue.lables %}` is caught before it silently never fires.
 */
export const STRICT_CONDITION_ENGINE = new Liquid({ ...BASE_OPTIONS, lenientIf: false });
