/**
 * From Linear's GraphQL nodes to the normalised issue. Pure: no I/O. Linear's own values
 * are kept where the domain has a place for them (the workflow state's name as the state,
 * `ENG-12` as identifier and display id, the suggested branch name); priority 0 means
 * "none" in Linear and becomes null, so an unprioritised issue is not ranked as urgent.
 * Blockers are the inverse relations of type `blocks`: the issues that block this one.
 * A node without the fields the orchestrator cannot do without (id, identifier, title,
 * state) is a payload error, which a listing leaves out and a read by id reports.
 */
import type { BlockerRef, Issue, IssueComment } from '../../domain/issue.js';
import type { IssueStateReading } from '../../domain/tracker.js';
import { payloadError } from './errors.js';
import { record } from './values.js';

/** One page of a connection. */
export interface Page {
  nodes: unknown[];
  hasNextPage: boolean;
  /** null when the answer gave none. */
  endCursor: string | null;
}

/** An issue node read, and whether one of its nested lists was cut short at the first page. */
export interface ReadIssue {
  issue: Issue;
  truncated: boolean;
}

/** Linear's ranked priorities (1 urgent … 4 low); 0 and anything else is "none". */
const RANKED = new Set([1, 2, 3, 4]);

/** Reads `parent[field]` as a connection page; a missing or malformed one is a payload error. */
export function readPage(parent: unknown, field: string, what: string): Page {
  const connection = record(parent)?.[field];
  const c = record(connection);
  if (c === null || !Array.isArray(c.nodes)) throw payloadError(what, `${field} has no nodes`);
  const info = record(c.pageInfo);
  const endCursor = info?.endCursor;
  return {
    nodes: c.nodes,
    hasNextPage: info?.hasNextPage === true,
    endCursor: typeof endCursor === 'string' && endCursor !== '' ? endCursor : null,
  };
}

/** Reads one issue node (comments not fetched: null). */
export function readIssue(value: unknown, what: string): ReadIssue {
  const v = record(value);
  if (v === null) throw payloadError(what, 'an issue is not an object');
  const id = nonEmpty(v.id);
  const identifier = nonEmpty(v.identifier);
  if (id === null || identifier === null) throw payloadError(what, 'an issue has no id or identifier');
  const title = nonEmpty(v.title);
  if (title === null) throw payloadError(what, `issue ${identifier} has no title`);
  const state = nonEmpty(record(v.state)?.name);
  if (state === null) throw payloadError(what, `issue ${identifier} has no workflow state`);
  const labels = nestedNodes(v.labels);
  const relations = nestedNodes(v.inverseRelations);
  const parent = record(v.parent);
  const parentId = nonEmpty(parent?.id);
  return {
    issue: {
      id,
      identifier,
      displayId: identifier,
      title,
      description: typeof v.description === 'string' ? v.description : '',
      priority: priorityOf(v.priority),
      state,
      branchName: typeof v.branchName === 'string' ? v.branchName : '',
      url: typeof v.url === 'string' ? v.url : '',
      labels: labelNames(labels.nodes),
      assignee: nonEmpty(record(v.assignee)?.id) ?? '',
      issueType: '',
      parent:
        parentId === null ? null : { id: parentId, identifier: nonEmpty(parent?.identifier) ?? parentId },
      comments: null,
      blockedBy: blockers(relations.nodes),
      createdAt: typeof v.createdAt === 'string' ? v.createdAt : '',
      updatedAt: typeof v.updatedAt === 'string' ? v.updatedAt : '',
    },
    truncated: labels.more || relations.more,
  };
}

/** Reads an issue node as a state reading (id, identifier and state are required). */
export function readStateReading(value: unknown, what: string): IssueStateReading {
  const v = record(value);
  const id = nonEmpty(v?.id);
  const identifier = nonEmpty(v?.identifier);
  const state = nonEmpty(record(v?.state)?.name);
  if (id === null || identifier === null || state === null)
    throw payloadError(what, `issue ${identifier ?? id ?? '?'} has no id, identifier or workflow state`);
  return { id, identifier, state };
}

/** Reads comment nodes, oldest first (Linear's page order is not promised). */
export function readComments(nodes: readonly unknown[], what: string): IssueComment[] {
  const comments = nodes.map((node) => {
    const c = record(node);
    const id = nonEmpty(c?.id);
    if (c === null || id === null) throw payloadError(what, 'a comment has no id');
    const user = record(c.user);
    return {
      id,
      author: nonEmpty(user?.displayName) ?? nonEmpty(user?.name) ?? '',
      body: typeof c.body === 'string' ? c.body : '',
      createdAt: typeof c.createdAt === 'string' ? c.createdAt : '',
    };
  });
  return sortByCreation(comments);
}

/** Comments in creation order (stable); when one has no readable time, the server's order is kept. */
export function sortByCreation(comments: IssueComment[]): IssueComment[] {
  const times = comments.map((c) => Date.parse(c.createdAt));
  if (times.some(Number.isNaN)) return comments;
  return comments
    .map((c, index) => ({ c, at: times[index] as number }))
    .sort((a, b) => a.at - b.at)
    .map(({ c }) => c);
}

/** Linear's priority as the domain's: 1–4 kept, 0 ("no priority") and anything else null. */
export function priorityOf(value: unknown): number | null {
  return typeof value === 'number' && RANKED.has(value) ? value : null;
}

/** Label names trimmed and lowercased, blanks and repeats dropped. */
export function labelNames(nodes: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const node of nodes) {
    const name = record(node)?.name;
    if (typeof name !== 'string') continue;
    const label = name.trim().toLowerCase();
    if (label !== '' && !out.includes(label)) out.push(label);
  }
  return out;
}

/** The issues that block this one: inverse relations of type `blocks`, each once. */
export function blockers(relations: readonly unknown[]): BlockerRef[] {
  const out: BlockerRef[] = [];
  for (const node of relations) {
    const relation = record(node);
    if (relation?.type !== 'blocks') continue;
    const issue = record(relation.issue);
    const id = nonEmpty(issue?.id);
    if (id === null || out.some((b) => b.id === id)) continue;
    out.push({
      id,
      identifier: nonEmpty(issue?.identifier) ?? id,
      // Unknown ("") counts as not terminal, so a blocker we cannot read still blocks.
      state: nonEmpty(record(issue?.state)?.name) ?? '',
    });
  }
  return out;
}

function nestedNodes(connection: unknown): { nodes: unknown[]; more: boolean } {
  const c = record(connection);
  return {
    nodes: Array.isArray(c?.nodes) ? c.nodes : [],
    more: record(c?.pageInfo)?.hasNextPage === true,
  };
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
