/**
 * Turns one raw issue object from the issues file into the normalised `Issue`.
 * Hand-edited files drift, so every field is checked here and a wrong type is a
 * named failure rather than a half-filled issue: a silently dropped `state` would
 * make the orchestrator stop or start work on the wrong issue.
 */
import type { BlockerRef, Issue, IssueComment, ParentRef } from '../../domain/issue.js';

/** A normalised issue, or why the raw object is not one. */
export type NormaliseResult = { ok: true; issue: Issue } | { ok: false; reason: string };

type Raw = Record<string, unknown>;

/** Snake_case is canonical; these camelCase spellings are accepted when the snake_case key is absent. */
const ALIASES: Readonly<Record<string, string>> = {
  branch_name: 'branchName',
  issue_type: 'issueType',
  blocked_by: 'blockedBy',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
};

class Invalid {
  constructor(readonly reason: string) {}
}

function isRecord(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(raw: Raw, key: string): unknown {
  if (Object.hasOwn(raw, key)) return raw[key];
  const alias = ALIASES[key];
  return alias !== undefined && Object.hasOwn(raw, alias) ? raw[alias] : undefined;
}

function requiredString(raw: Raw, key: string, where: string): string {
  const value = field(raw, key);
  if (value === undefined || value === null) throw new Invalid(`${where} is missing required field "${key}"`);
  if (typeof value !== 'string')
    throw new Invalid(`${where} field "${key}" must be a string, got ${typeName(value)}`);
  if (value.trim() === '') throw new Invalid(`${where} field "${key}" must not be empty`);
  return value;
}

function optionalString(raw: Raw, key: string, where: string): string {
  const value = field(raw, key);
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string')
    throw new Invalid(`${where} field "${key}" must be a string, got ${typeName(value)}`);
  return value;
}

function optionalList(raw: Raw, key: string, where: string): unknown[] | null {
  const value = field(raw, key);
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value))
    throw new Invalid(`${where} field "${key}" must be a list, got ${typeName(value)}`);
  return value;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function labels(raw: Raw, where: string): string[] {
  const list = optionalList(raw, 'labels', where) ?? [];
  return list.map((label, i) => {
    if (typeof label !== 'string')
      throw new Invalid(`${where} label ${i + 1} must be a string, got ${typeName(label)}`);
    return label.toLowerCase();
  });
}

function parent(raw: Raw, where: string): ParentRef | null {
  const value = field(raw, 'parent');
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) throw new Invalid(`${where} field "parent" must be an object with id and identifier`);
  const at = `${where} parent`;
  return { id: requiredString(value, 'id', at), identifier: requiredString(value, 'identifier', at) };
}

function comments(raw: Raw, where: string): IssueComment[] | null {
  const list = optionalList(raw, 'comments', where);
  if (list === null) return null;
  return list.map((item, i) => {
    const at = `${where} comment ${i + 1}`;
    if (!isRecord(item)) throw new Invalid(`${at} must be an object, got ${typeName(item)}`);
    const body = field(item, 'body');
    if (typeof body !== 'string') throw new Invalid(`${at} field "body" must be a string`);
    return {
      id: optionalString(item, 'id', at),
      author: optionalString(item, 'author', at),
      body,
      createdAt: optionalString(item, 'created_at', at),
    };
  });
}

function blockers(raw: Raw, where: string): BlockerRef[] {
  const list = optionalList(raw, 'blocked_by', where) ?? [];
  return list.map((item, i) => {
    const at = `${where} blocker ${i + 1}`;
    if (!isRecord(item)) throw new Invalid(`${at} must be an object, got ${typeName(item)}`);
    const id = optionalString(item, 'id', at);
    const identifier = optionalString(item, 'identifier', at);
    if (id === '' && identifier === '') throw new Invalid(`${at} needs an "id" or an "identifier"`);
    return { id, identifier, state: optionalString(item, 'state', at) };
  });
}

/** Accepts an integer priority; anything else (a fraction, a string, a boolean) means "none". */
function priority(raw: Raw): number | null {
  const value = field(raw, 'priority');
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

/** Normalises one raw issue object; `comments` keeps its tri-state (null = absent). */
export function normaliseIssue(raw: unknown): NormaliseResult {
  if (!isRecord(raw)) return { ok: false, reason: `an issue must be an object, got ${typeName(raw)}` };
  try {
    const where =
      typeof raw.identifier === 'string' && raw.identifier !== '' ? `issue ${raw.identifier}` : 'issue';
    const identifier = requiredString(raw, 'identifier', where);
    return {
      ok: true,
      issue: {
        id: requiredString(raw, 'id', where),
        identifier,
        displayId: identifier,
        title: requiredString(raw, 'title', where),
        description: optionalString(raw, 'description', where),
        priority: priority(raw),
        state: requiredString(raw, 'state', where),
        branchName: optionalString(raw, 'branch_name', where),
        url: optionalString(raw, 'url', where),
        labels: labels(raw, where),
        assignee: optionalString(raw, 'assignee', where),
        issueType: optionalString(raw, 'issue_type', where),
        parent: parent(raw, where),
        comments: comments(raw, where),
        blockedBy: blockers(raw, where),
        createdAt: optionalString(raw, 'created_at', where),
        updatedAt: optionalString(raw, 'updated_at', where),
      },
    };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, reason: err.reason };
    throw err;
  }
}

/**
 * Fills blocker references from the other issues in the same file: a blocker that
 * names an issue in the file takes that issue's current state (and whichever of
 * id/identifier it omitted), so moving the blocker to a terminal state unblocks
 * its dependants without a second edit. `byId` and `byIdentifier` index `issues`
 * (the parser has them already; building them again for every write of a large
 * file would cost more than the write).
 */
export function resolveBlockers(
  issues: readonly Issue[],
  byId: ReadonlyMap<string, number> = indexBy(issues, (issue) => issue.id),
  byIdentifier: ReadonlyMap<string, number> = indexBy(issues, (issue) => issue.identifier),
): Issue[] {
  const at = (index: number | undefined) => (index === undefined ? undefined : issues[index]);
  return issues.map((issue) => {
    if (issue.blockedBy.length === 0) return issue;
    const blockedBy = issue.blockedBy.map((ref) => {
      const target =
        (ref.id !== '' ? at(byId.get(ref.id)) : undefined) ?? at(byIdentifier.get(ref.identifier));
      if (target === undefined) return ref;
      return { id: target.id, identifier: target.identifier, state: target.state };
    });
    return { ...issue, blockedBy };
  });
}

function indexBy(issues: readonly Issue[], key: (issue: Issue) => string): Map<string, number> {
  const index = new Map<string, number>();
  issues.forEach((issue, i) => {
    if (!index.has(key(issue))) index.set(key(issue), i);
  });
  return index;
}
