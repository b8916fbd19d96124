/**
 * The two Liquid engines prompts are parsed and rendered with. Strict variables and filters
 * turn a typo into a diagnostic instead of a silently empty prompt; partials are disabled so a
 * prompt can never read files from wherever the orchestrator happens to run.
 */

import { Liquid, type LiquidOptions } from 'liquidjs';

/** What one render may spend; Liquid checks both as it goes and fails the render past either. */
export interface RenderLimits {
  /** Wall time the render may run. */
  timeMs: number;
  /** What the render may allocate, in characters and list items as Liquid counts them. */
  memoryUnits: number;
}

/**
 * Limits of a render made on the event loop: `validate`, every reload (against the small sample
 * issue) and the first attempt at each turn's prompt. A real prompt needs a fraction of either;
 * a render that needs more holds the loop for no longer than this before it is refused or, for a
 * turn, handed to the render thread (bounded-render.ts).
 */
export const LOOP_RENDER_LIMITS: RenderLimits = { timeMs: 50, memoryUnits: 256 * 1024 };

/**
 * Limits of a turn's render on the render thread. Off the loop they can leave room for a large
 * issue; the thread is also stopped shortly after `timeMs`, since one filter call over a huge
 * list runs to its end before Liquid looks at the clock again.
 */
export const RUN_RENDER_LIMITS: RenderLimits = { timeMs: 2_000, memoryUnits: 16 * 1024 * 1024 };

/** Longest template accepted by the parser, in characters (the workflow file's own limit is 1 MiB). */
export const PROMPT_PARSE_LIMIT_CHARS = 1024 * 1024;

const BASE_OPTIONS: LiquidOptions = {
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  // Report every problem in one pass, not just the first.
  catchAllErrors: true,
  // `{% include %}`, `{% render %}` and `{% layout %}` resolve against this empty map, so they fail.
  templates: {},
  parseLimit: PROMPT_PARSE_LIMIT_CHARS,
  renderLimit: RUN_RENDER_LIMITS.timeMs,
  memoryLimit: RUN_RENDER_LIMITS.memoryUnits,
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

/**
 * `slug`: the value as lowercase runs of letters and digits joined by `-` (`ENG-12: Fix it!`
 * → `eng-12-fix-it`), for branch and file names; at most 60 characters, never ending in `-`.
 */
export function slugify(value: unknown): string {
  return String(value ?? '')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+/, '')
    .slice(0, 60)
    .replace(/-+$/, '');
}

for (const engine of [RUNTIME_ENGINE, STRICT_CONDITION_ENGINE]) engine.registerFilter('slug', slugify);
