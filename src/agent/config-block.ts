/**
 * The shape every kind's pass-through block parser shares: zod schema in, typed
 * config or coded issues out, unknown keys as warnings. Sessions and `validate`
 * call the same `parse`, so a block that validates is a block that runs.
 */
import type { z } from 'zod';
import type { ConfigIssue } from '../domain/diagnostic.js';
import { parseBlock, unknownKeyIssues } from '../workflow/zod-issues.js';

export type BlockResult<C> =
  | { ok: true; config: C; warnings: ConfigIssue[] }
  | { ok: false; issues: ConfigIssue[] };

export interface ConfigBlock<C> {
  /** Parses the block; paths in issues start with the block name. */
  parse(raw: Record<string, unknown>): BlockResult<C>;
  /** Every issue of the block, errors and warnings, for `validate`. */
  validate(raw: Record<string, unknown>): ConfigIssue[];
}

/** Defines the parser of the `<name>:` block. `refine` adds rules zod cannot express. */
export function defineBlock<S extends z.ZodObject, C>(
  name: string,
  schema: S,
  toConfig: (value: z.output<S>) => C,
  refine?: (value: z.output<S>) => ConfigIssue[],
): ConfigBlock<C> {
  const parse = (raw: Record<string, unknown>): BlockResult<C> => {
    const parsed = parseBlock(schema, raw, [name]);
    if (!parsed.ok) return parsed;
    const extra = refine?.(parsed.value) ?? [];
    const warnings = [
      ...unknownKeyIssues(raw, Object.keys(schema.shape), [name]),
      ...extra.filter((i) => i.severity === 'warning'),
    ];
    const errors = extra.filter((i) => i.severity === 'error');
    if (errors.length > 0) return { ok: false, issues: [...errors, ...warnings] };
    return { ok: true, config: toConfig(parsed.value), warnings };
  };
  return {
    parse,
    validate: (raw) => {
      const result = parse(raw);
      return result.ok ? result.warnings : result.issues;
    },
  };
}
