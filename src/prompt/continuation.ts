/**
 * What a continuation turn is prompted with. From the second turn of a session the agent's
 * thread already holds the task, so sending the whole rendered template again repeats it and
 * spends context for nothing. A template that reads `run.is_continuation` has said what a
 * continuation should carry, and is rendered as written; any other template is replaced on
 * continuation turns by short built-in guidance. The choice is made once, from the parsed
 * template: a render cannot tell "never looks at it" from "looked and printed nothing".
 */

import type { Liquid, Template } from 'liquidjs';

/** Who writes a continuation turn's prompt: the template itself, or the built-in guidance. */
export type ContinuationSource = 'template' | 'guidance';

/** Liquid's static-analysis path of one variable: names, indexes, or a nested computed lookup. */
type Segments = ReturnType<Liquid['globalVariableSegmentsSync']>[number];

/**
 * `template` when the parsed template reads `run.is_continuation` (or may reach it: all of
 * `run`, or a computed member of it), else `guidance`. Called once when a prompt is compiled.
 */
export function continuationSource(engine: Liquid, parsed: Template[]): ContinuationSource {
  let paths: Segments[];
  try {
    paths = engine.globalVariableSegmentsSync(parsed);
  } catch {
    // An analysis this engine cannot do leaves the template in charge, as it always was.
    return 'template';
  }
  return paths.some(readsContinuation) ? 'template' : 'guidance';
}

function readsContinuation(path: Segments): boolean {
  if (path[0] !== 'run') return false;
  const member = path[1];
  // `{% assign r = run %}` or `run[name]` can read the flag without naming it here.
  return member === undefined || member === 'is_continuation' || typeof member !== 'string';
}
