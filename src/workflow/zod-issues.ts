/**
 * One translation from zod's issues to our coded config issues, shared by the
 * front-matter schema and every adapter's pass-through block parser, so codes and
 * messages read the same whichever part of the file is wrong.
 */
import type { z } from 'zod';
import type { ConfigIssue } from '../domain/diagnostic.js';
import { closest } from './suggest.js';

/** Parses `raw` with `schema`; failures become config issues under `prefix`. */
export function parseBlock<T extends z.ZodType>(
  schema: T,
  raw: unknown,
  prefix: readonly (string | number)[],
): { ok: true; value: z.output<T> } | { ok: false; issues: ConfigIssue[] } {
  // Blocks are parsed once per load or session: zod's compiled fast path would not pay off.
  const result = schema.safeParse(raw, { jitless: true });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, issues: result.error.issues.map((i) => schemaIssue(i, raw, prefix)) };
}

/** Turns a zod issue into a coded, readable config issue. */
export function schemaIssue(
  issue: z.core.$ZodIssue,
  raw: unknown,
  prefix: readonly (string | number)[] = [],
): ConfigIssue {
  const inner = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const keyPath = [...prefix, ...inner];
  const name = keyPath.join('.');
  // Codes name the key, not the list position, so they stay stable as lists change.
  const codeName = keyPath.filter((p) => typeof p !== 'number').join('.');
  const got = describeValue(valueAt(raw, inner));
  switch (issue.code) {
    case 'invalid_type':
      return {
        severity: 'error',
        code: `${codeName}.invalid`,
        message: `${name} must be ${article(issue.expected)}, got ${got}`,
        path: keyPath,
      };
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) {
        return {
          severity: 'error',
          code: `${codeName}.empty`,
          message: `${name} must not be empty`,
          path: keyPath,
        };
      }
      return {
        severity: 'error',
        code: `${codeName}.out_of_range`,
        message: `${name} must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}, got ${got}`,
        path: keyPath,
      };
    case 'too_big':
      return {
        severity: 'error',
        code: `${codeName}.out_of_range`,
        message: `${name} must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}, got ${got}`,
        path: keyPath,
      };
    case 'invalid_value':
      return {
        severity: 'error',
        code: `${codeName}.unsupported`,
        message: `${name} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${got}`,
        path: keyPath,
      };
    case 'invalid_union': {
      // A value of the right type for one alternative (a policy name among names-or-maps) is
      // reported as that alternative reports it, not as "matches none".
      const typed = (issue.errors ?? []).find(
        (branch) =>
          branch.length > 0 && !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0),
      );
      const first = typed?.[0];
      if (first === undefined) break;
      return schemaIssue({ ...first, path: [...issue.path, ...first.path] }, raw, prefix);
    }
    case 'invalid_key':
      return {
        severity: 'error',
        code: `${codeName}.invalid_key`,
        message: `${name} is not an allowed key name`,
        path: keyPath,
      };
  }
  return {
    severity: 'error',
    code: `${codeName}.invalid`,
    message: `${name}: ${issue.message}`,
    path: keyPath,
  };
}

function article(expected: string): string {
  if (expected === 'int') return 'a whole number';
  if (expected === 'number') return 'a number';
  if (expected === 'object' || expected === 'record') return 'a map of keys';
  if (expected === 'array') return 'a list';
  if (expected === 'string') return 'text';
  if (expected === 'boolean') return 'true or false';
  return expected;
}

function valueAt(raw: unknown, keyPath: readonly (string | number)[]): unknown {
  let node: unknown = raw;
  for (const key of keyPath) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Warnings for keys of `raw` that `known` does not list, with a "did you mean". */
export function unknownKeyIssues(
  raw: unknown,
  known: readonly string[],
  prefix: readonly string[],
): ConfigIssue[] {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  return Object.keys(raw)
    .filter((key) => !known.includes(key))
    .map((key) => {
      const hint = closest(key, known);
      const where = [...prefix, key].join('.');
      return {
        severity: 'warning' as const,
        code: 'config.unknown_key',
        message: `unknown key "${where}"${hint ? ` (did you mean "${[...prefix, hint].join('.')}"?)` : ''}`,
        path: [...prefix, key],
      };
    });
}
