/**
 * Evaluates Linear-style filters (`{ state: { name: { eqIgnoreCase: "todo" } }, or: [...] }`)
 * against the fake's entities. Every comparator and every field it does not know is refused
 * with a GraphQL error instead of being skipped: a filter that is silently ignored would let
 * a tracker believe it narrowed a listing when the real service would not have.
 */
import { GraphQLError } from 'graphql';

/** A filter object as graphql-js coerced it from the query. */
export type Filter = Record<string, unknown>;

/** For each filter field of an entity, how to test it. */
export type FieldMatchers<T> = Record<string, (entity: T, value: unknown) => boolean>;

/** Whether `entity` passes `filter` (`and`, `or`, `null` and the entity's own fields). */
export function matches<T>(entity: T | null, filter: unknown, fields: FieldMatchers<T>): boolean {
  if (filter === null || filter === undefined) return true;
  for (const [key, value] of Object.entries(filter as Filter)) {
    if (value === null || value === undefined) continue;
    if (key === 'null') {
      if ((entity === null) !== value) return false;
      continue;
    }
    if (entity === null) return false;
    if (key === 'and') {
      if (!(value as unknown[]).every((f) => matches(entity, f, fields))) return false;
      continue;
    }
    if (key === 'or') {
      if (!(value as unknown[]).some((f) => matches(entity, f, fields))) return false;
      continue;
    }
    const field = fields[key];
    if (field === undefined) throw unsupported(`filter field "${key}"`);
    if (!field(entity, value)) return false;
  }
  return true;
}

/** Whether `actual` passes a comparator (`{ eq }`, `{ in }`, `{ eqIgnoreCase }` …). */
export function compare(actual: unknown, comparator: unknown): boolean {
  for (const [op, expected] of Object.entries(comparator as Filter)) {
    if (expected === null || expected === undefined) continue;
    if (!apply(op, actual, expected)) return false;
  }
  return true;
}

function apply(op: string, actual: unknown, expected: unknown): boolean {
  const text = (v: unknown) => (typeof v === 'string' ? v : String(v));
  switch (op) {
    case 'eq':
      return actual === expected;
    case 'neq':
      return actual !== expected;
    case 'in':
      return (expected as unknown[]).includes(actual);
    case 'nin':
      return !(expected as unknown[]).includes(actual);
    case 'eqIgnoreCase':
      return actual !== null && text(actual).toLowerCase() === text(expected).toLowerCase();
    case 'neqIgnoreCase':
      return actual === null || text(actual).toLowerCase() !== text(expected).toLowerCase();
    case 'contains':
      return actual !== null && text(actual).includes(text(expected));
    case 'containsIgnoreCase':
      return actual !== null && text(actual).toLowerCase().includes(text(expected).toLowerCase());
    case 'notContains':
      return actual === null || !text(actual).includes(text(expected));
    case 'startsWith':
      return actual !== null && text(actual).startsWith(text(expected));
    case 'endsWith':
      return actual !== null && text(actual).endsWith(text(expected));
    case 'gt':
      return typeof actual === 'number' && actual > (expected as number);
    case 'gte':
      return typeof actual === 'number' && actual >= (expected as number);
    case 'lt':
      return typeof actual === 'number' && actual < (expected as number);
    case 'lte':
      return typeof actual === 'number' && actual <= (expected as number);
    case 'null':
      return (actual === null) === expected;
    default:
      throw unsupported(`comparator "${op}"`);
  }
}

function unsupported(what: string): GraphQLError {
  return new GraphQLError(`the fake Linear does not evaluate the ${what}`, {
    extensions: { type: 'invalid input', code: 'INPUT_ERROR', userError: true },
  });
}
