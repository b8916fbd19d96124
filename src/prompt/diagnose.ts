/**
 * Turns Liquid's exceptions into diagnostics positioned in the ORIGINAL WORKFLOW.md. Liquid
 * counts lines and columns from the start of the prompt body, which rarely starts at line 1 of
 * the file; reporting its numbers raw would point the operator at the front matter.
 */

import { LiquidError } from 'liquidjs';
import type { Diagnostic } from '../domain/diagnostic.js';
import type { RenderLimits } from './engine.js';

/** Where a prompt body begins in its file (1-based), so positions can be translated back. */
export interface PromptOrigin {
  /** Path of the file the template came from (WORKFLOW.md). */
  file: string;
  /** 1-based line of the template's first character. */
  line: number;
  /** 1-based column of the template's first character. */
  column: number;
}

/** Which step failed: parsing reports syntax, rendering reports render problems. */
export type LiquidPhase = 'parse' | 'render';

/** Maps a 1-based (line, column) inside the template to the same place in the original file. */
export function translatePosition(
  origin: PromptOrigin,
  liquidLine: number,
  liquidColumn: number,
): { line: number; column: number } {
  return {
    line: origin.line + (liquidLine - 1),
    column: liquidLine === 1 ? origin.column + liquidColumn - 1 : liquidColumn,
  };
}

/**
 * Diagnostics for anything thrown by Liquid (or by anything else) while parsing or rendering;
 * `limits` are the ones the render ran under, named when it hit one.
 */
export function diagnosticsFromError(
  err: unknown,
  origin: PromptOrigin,
  phase: LiquidPhase,
  limits?: RenderLimits,
): Diagnostic[] {
  return dedupeDiagnostics(flatten(err).map((leaf) => diagnosticFromLeaf(leaf, origin, phase, limits)));
}

/** The code of a render stopped by one of its limits. */
export const RENDER_LIMIT_CODE = 'template.render_limit';

/** A render stopped at its time limit, by Liquid's own check or by stopping its thread. */
export function renderTimeLimitDiagnostic(
  origin: PromptOrigin,
  position: { line: number; column: number },
  limitMs: number,
): Diagnostic {
  const message = `template render stopped after its limit of ${limitMs} ms (a loop or a filter over a huge range?)`;
  return error(RENDER_LIMIT_CODE, message, origin, position);
}

/** Drops exact repeats (a loop body fails once per iteration), keeping first-seen order. */
export function dedupeDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const key = JSON.stringify([d.severity, d.code, d.file, d.line, d.column, d.message, d.path]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function flatten(err: unknown): unknown[] {
  const nested = errorsOf(err);
  if (nested === null) return [err];
  return nested.length === 0 ? [err] : nested.flatMap(flatten);
}

/** The inner errors of a `LiquidErrors` (thrown with `catchAllErrors`), or null. */
function errorsOf(err: unknown): unknown[] | null {
  if (!LiquidError.is(err)) return null;
  const errors: unknown = (err as { errors?: unknown }).errors;
  return Array.isArray(errors) ? errors : null;
}

const UNDEFINED_VARIABLE = /^undefined variable: (.*)$/s;
const UNDEFINED_FILTER = /^undefined filter: (.*)$/s;
const PARTIAL_LOOKUP = /^ENOENT: Failed to lookup "(.*)" in /s;
// Liquid's own wording when a render passes `renderLimit` or `memoryLimit`.
const TIME_LIMIT_HIT = 'template render limit exceeded';
const MEMORY_LIMIT_HIT = 'memory alloc limit exceeded';

function diagnosticFromLeaf(
  err: unknown,
  origin: PromptOrigin,
  phase: LiquidPhase,
  limits: RenderLimits | undefined,
): Diagnostic {
  const position = positionOf(err, origin);
  const raw = rawMessage(err);
  if (limits !== undefined && raw === TIME_LIMIT_HIT) {
    return renderTimeLimitDiagnostic(origin, position, limits.timeMs);
  }
  if (limits !== undefined && raw === MEMORY_LIMIT_HIT) {
    const message = `template render stopped: it built more than ${limits.memoryUnits} characters or list items, its limit`;
    return error(RENDER_LIMIT_CODE, message, origin, position);
  }
  const variable = UNDEFINED_VARIABLE.exec(raw)?.[1];
  if (variable !== undefined) {
    return error(
      'template.unknown_variable',
      `unknown template variable ${firstLine(variable)}`,
      origin,
      position,
    );
  }
  const filter = UNDEFINED_FILTER.exec(raw)?.[1];
  if (filter !== undefined) {
    return error('template.unknown_filter', `unknown template filter ${firstLine(filter)}`, origin, position);
  }
  const partial = PARTIAL_LOOKUP.exec(raw)?.[1];
  if (partial !== undefined) {
    const message = `template partials are not supported: cannot include "${firstLine(partial)}"`;
    return error('template.render', message, origin, position);
  }
  if (phase === 'parse') {
    return error('template.syntax', `template syntax error: ${firstLine(raw)}`, origin, position);
  }
  return error('template.render', `template render error: ${firstLine(raw)}`, origin, position);
}

function error(
  code: string,
  message: string,
  origin: PromptOrigin,
  position: { line: number; column: number },
): Diagnostic {
  return {
    severity: 'error',
    code,
    message,
    file: origin.file,
    line: position.line,
    column: position.column,
  };
}

/** The error's position in the original file; the template's start when Liquid gives none. */
function positionOf(err: unknown, origin: PromptOrigin): { line: number; column: number } {
  if (LiquidError.is(err)) {
    const token: unknown = err.token;
    if (hasPosition(token)) {
      const [line, column] = token.getPosition();
      if (Number.isInteger(line) && Number.isInteger(column)) return translatePosition(origin, line, column);
    }
  }
  return { line: origin.line, column: origin.column };
}

function hasPosition(token: unknown): token is { getPosition(): [number, number] } {
  return (
    typeof token === 'object' && token !== null && typeof Reflect.get(token, 'getPosition') === 'function'
  );
}

/** Liquid's message without the `, line:3, col:4` suffix it appends (we give our own position). */
function rawMessage(err: unknown): string {
  if (LiquidError.is(err)) {
    const original = err.originalError;
    if (original instanceof Error && original.message !== '') return original.message;
    return err.message.replace(/, line:\d+, col:\d+(, file:.*)?$/s, '');
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Messages are one line: never a stack trace or Liquid's multi-line source excerpt. */
function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.trim() === '' ? 'unknown error' : line.trim();
}
