/**
 * From Jira's issue and comment objects to the normalised issue. Pure: no I/O.
 * The id is Jira's numeric issue id (stable across a move to another project, which changes
 * the key), the identifier is the key. Priority is the priority's id as a number, which in
 * Jira's default scheme runs from 1 (Highest) to 5 (Lowest): lower is more urgent, as the
 * orchestrator expects; a custom priority whose id is not a number is null, never a guess.
 * Blockers come from `Blocks` links seen from the blocked side: the other issue appears as
 * the link's `inwardIssue` ("is blocked by") and carries its own status.
 */
import type { BlockerRef, Issue, IssueComment, ParentRef } from '../../domain/issue.js';
import type { IssueStateReading } from '../../domain/tracker.js';
import { adfToText } from './adf.js';
import { payloadError } from './errors.js';

/** The fields every issue read asks for. */
export const ISSUE_FIELDS = [
  'summary',
  'description',
  'status',
  'priority',
  'labels',
  'assignee',
  'issuetype',
  'parent',
  'issuelinks',
  'created',
  'updated',
] as const;

type Fields = Record<string, unknown>;

/** Reads one issue object; a value without the documented shape is a payload error. */
export function toIssue(value: unknown, site: string, what: string): Issue {
  const { id, key, fields } = envelope(value, what);
  const title = fields.summary;
  if (typeof title !== 'string') throw payloadError(what, `issue ${key} has no summary`);
  const state = statusName(fields.status);
  if (state === null) throw payloadError(what, `issue ${key} has no status`);
  const assignee = fields.assignee as { displayName?: unknown; accountId?: unknown } | null | undefined;
  const issueType = fields.issuetype as { name?: unknown } | null | undefined;
  return {
    id,
    identifier: key,
    displayId: key,
    title,
    description: adfToText(fields.description),
    priority: priorityOf(fields.priority),
    state,
    branchName: '',
    url: `${site}/browse/${key}`,
    labels: Array.isArray(fields.labels)
      ? fields.labels.filter((l): l is string => typeof l === 'string').map((l) => l.toLowerCase())
      : [],
    assignee: typeof assignee?.displayName === 'string' ? assignee.displayName : '',
    issueType: typeof issueType?.name === 'string' ? issueType.name : '',
    parent: parentOf(fields.parent),
    comments: null,
    blockedBy: blockersOf(fields.issuelinks),
    createdAt: isoTime(fields.created),
    updatedAt: isoTime(fields.updated),
  };
}

/** Reads the id, key and status of one issue (a state reading). */
export function toStateReading(value: unknown, what: string): IssueStateReading {
  const { id, key, fields } = envelope(value, what);
  const state = statusName(fields.status);
  if (state === null) throw payloadError(what, `issue ${key} has no status`);
  return { id, identifier: key, state };
}

/** The `issues` of one search page and its continuation token (null on the last page). */
export function readSearchPage(
  value: unknown,
  what: string,
): { issues: unknown[]; nextPageToken: string | null } {
  const page = value as { issues?: unknown; nextPageToken?: unknown; isLast?: unknown } | null;
  if (typeof page !== 'object' || page === null || !Array.isArray(page.issues))
    throw payloadError(what, 'a search answer has no issues list');
  const token =
    typeof page.nextPageToken === 'string' && page.nextPageToken !== '' ? page.nextPageToken : null;
  return { issues: page.issues, nextPageToken: page.isLast === true ? null : token };
}

/** One page of comments and where the next starts (null when this was the last). */
export function readCommentPage(
  value: unknown,
  what: string,
): { comments: IssueComment[]; nextStartAt: number | null } {
  const page = value as { comments?: unknown; startAt?: unknown; total?: unknown } | null;
  if (typeof page !== 'object' || page === null || !Array.isArray(page.comments))
    throw payloadError(what, 'a comment answer has no comments list');
  const comments = page.comments.map((item): IssueComment => {
    const c = item as { id?: unknown; author?: unknown; body?: unknown; created?: unknown } | null;
    if (typeof c !== 'object' || c === null || (typeof c.id !== 'string' && typeof c.id !== 'number'))
      throw payloadError(what, 'a comment has no id');
    const author = c.author as { displayName?: unknown } | null | undefined;
    return {
      id: String(c.id),
      author: typeof author?.displayName === 'string' ? author.displayName : '',
      body: adfToText(c.body),
      createdAt: isoTime(c.created),
    };
  });
  const startAt = typeof page.startAt === 'number' ? page.startAt : 0;
  const total = typeof page.total === 'number' ? page.total : startAt + comments.length;
  const next = startAt + comments.length;
  return { comments, nextStartAt: comments.length > 0 && next < total ? next : null };
}

/** The lowercased labels of an issue object (for a write that must not add a duplicate). */
export function labelsOf(value: unknown, what: string): string[] {
  const { fields } = envelope(value, what);
  return Array.isArray(fields.labels)
    ? fields.labels.filter((l): l is string => typeof l === 'string').map((l) => l.toLowerCase())
    : [];
}

/** The target status names the issue's available transitions lead to, with their ids. */
export function readTransitions(value: unknown, what: string): { id: string; to: string }[] {
  const list = (value as { transitions?: unknown } | null)?.transitions;
  if (!Array.isArray(list)) throw payloadError(what, 'a transitions answer has no transitions list');
  return list.flatMap((t) => {
    const item = t as { id?: unknown; to?: { name?: unknown } } | null;
    if (typeof item?.id !== 'string' || typeof item.to?.name !== 'string') return [];
    return [{ id: item.id, to: item.to.name }];
  });
}

function envelope(value: unknown, what: string): { id: string; key: string; fields: Fields } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw payloadError(what, 'an issue is not an object');
  const v = value as { id?: unknown; key?: unknown; fields?: unknown };
  if (typeof v.id !== 'string' || !/^\d+$/.test(v.id) || typeof v.key !== 'string')
    throw payloadError(what, 'an issue has no numeric id or no key');
  if (typeof v.fields !== 'object' || v.fields === null)
    throw payloadError(what, `issue ${v.key} has no fields`);
  return { id: v.id, key: v.key, fields: v.fields as Fields };
}

function statusName(status: unknown): string | null {
  const name = (status as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' && name !== '' ? name : null;
}

function priorityOf(priority: unknown): number | null {
  const id = (priority as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : null;
}

function parentOf(parent: unknown): ParentRef | null {
  const p = parent as { id?: unknown; key?: unknown } | null | undefined;
  return typeof p?.id === 'string' && typeof p.key === 'string' ? { id: p.id, identifier: p.key } : null;
}

function blockersOf(links: unknown): BlockerRef[] {
  if (!Array.isArray(links)) return [];
  const out: BlockerRef[] = [];
  for (const link of links) {
    const l = link as { type?: { name?: unknown }; inwardIssue?: unknown } | null;
    if (typeof l?.type?.name !== 'string' || l.type.name.toLowerCase() !== 'blocks') continue;
    const other = l.inwardIssue as { id?: unknown; key?: unknown; fields?: { status?: unknown } } | undefined;
    if (typeof other?.id !== 'string' || typeof other.key !== 'string') continue;
    out.push({ id: other.id, identifier: other.key, state: statusName(other.fields?.status) ?? '' });
  }
  return out;
}

/** Jira's `2024-01-01T10:00:00.000+0000` as ISO-8601 in UTC; "" when absent or unreadable. */
function isoTime(value: unknown): string {
  if (typeof value !== 'string') return '';
  const at = Date.parse(value);
  return Number.isNaN(at) ? '' : new Date(at).toISOString();
}
