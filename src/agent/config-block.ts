/**
 * The shape every kind's pass-through block parser shares: zod schema in, typed
 * config or coded issues out, unknown keys as warnings. Sessions and `validate`
 * call the same `parse`, so a block that validates is a block that runs.
 *
 * A block may also declare the spellings other formats use for its keys (Symphony's,
 * Sortie's): an alias is read as the key it names (an `info` says so), an ignored key is
 * dropped with a `warning` saying why, so a file written for those tools runs unchanged
 * and nothing is reinterpreted silently.
 */
import type { z } from 'zod';
import type { ConfigIssue } from '../domain/diagnostic.js';
import { parseBlock, unknownKeyIssues } from '../workflow/zod-issues.js';

export type BlockResult<C> =
  | { ok: true; config: C; warnings: ConfigIssue[] }
  | { ok: false; issues: ConfigIssue[] };

export interface ConfigBlock<C> {
  /** Parses the block; paths in issues start with the block name. `warnings` holds notes (`info`) too. */
  parse(raw: Record<string, unknown>): BlockResult<C>;
  /** Every issue of the block, errors, warnings and notes, for `validate`. */
  validate(raw: Record<string, unknown>): ConfigIssue[];
}

/** Keys of other formats a block accepts: `aliases` written → ours, `ignored` key → why it has no effect. */
export interface BlockSpellings {
  aliases?: Readonly<Record<string, { key: string; format: string }>>;
  ignored?: Readonly<Record<string, string>>;
}

/** Defines the parser of the `<name>:` block. `refine` adds rules zod cannot express. */
export function defineBlock<S extends z.ZodObject, C>(
  name: string,
  schema: S,
  toConfig: (value: z.output<S>) => C,
  refine?: (value: z.output<S>) => ConfigIssue[],
  spellings: BlockSpellings = {},
): ConfigBlock<C> {
  const parse = (written: Record<string, unknown>): BlockResult<C> => {
    const { raw, notes, renamed } = respell(name, written, spellings);
    const parsed = parseBlock(schema, raw, [name]);
    if (!parsed.ok) return { ok: false, issues: [...parsed.issues.map((i) => renamed(i)), ...notes] };
    const extra = refine?.(parsed.value) ?? [];
    const warnings = [
      ...notes,
      ...unknownKeyIssues(raw, Object.keys(schema.shape), [name]),
      ...extra.filter((i) => i.severity !== 'error'),
    ];
    const errors = extra.filter((i) => i.severity === 'error');
    if (errors.length > 0) return { ok: false, issues: [...errors.map((i) => renamed(i)), ...warnings] };
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

/** The block with other formats' keys read as ours, the notes about it, and a mapper of issue paths back to the written key. */
function respell(
  name: string,
  written: Record<string, unknown>,
  spellings: BlockSpellings,
): { raw: Record<string, unknown>; notes: ConfigIssue[]; renamed: (issue: ConfigIssue) => ConfigIssue } {
  const raw = { ...written };
  const notes: ConfigIssue[] = [];
  const usedAlias = new Map<string, string>();
  for (const [alias, { key, format }] of Object.entries(spellings.aliases ?? {})) {
    if (!(alias in written)) continue;
    delete raw[alias];
    const value = written[alias];
    const ours = written[key];
    if (ours === undefined || ours === null) {
      raw[key] = value;
      usedAlias.set(key, alias);
      notes.push({
        severity: 'info',
        code: 'workflow.key.mapped',
        message: `${name}.${alias} read as ${name}.${key} (${format})`,
        path: [name, alias],
      });
    } else if (JSON.stringify(ours) !== JSON.stringify(value)) {
      notes.push({
        severity: 'warning',
        code: 'workflow.key.shadowed',
        message: `${name}.${alias} differs from ${name}.${key}; ${name}.${key} is used and ${name}.${alias} is ignored (${format})`,
        path: [name, alias],
      });
    }
  }
  for (const [key, why] of Object.entries(spellings.ignored ?? {})) {
    if (!(key in written)) continue;
    delete raw[key];
    notes.push({
      severity: 'warning',
      code: 'workflow.key.ignored',
      message: `${name}.${key} is ignored: ${why}`,
      path: [name, key],
    });
  }
  const renamed = (issue: ConfigIssue): ConfigIssue => {
    const key = issue.path[1];
    const alias = typeof key === 'string' ? usedAlias.get(key) : undefined;
    return alias === undefined ? issue : { ...issue, path: [name, alias, ...issue.path.slice(2)] };
  };
  return { raw, notes, renamed };
}
