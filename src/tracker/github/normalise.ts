/**
 * From the REST API's issue and comment objects to the normalised issue. Pure: no I/O.
 * The state is not a field on this tracker but a label: the first label naming an active
 * state (in configured order), then a terminal one, then the handoff and blocked states;
 * an issue with none of them is in the first active state while open and the first terminal
 * state once closed. States are reported in their configured spelling, and state labels are
 * left out of `labels`. Pull requests come
 * back from the issues endpoints too and are never issues here.
 */

import { TrackerError } from '../../domain/errors.js';
import type { BlockerRef, Issue, IssueComment } from '../../domain/issue.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { payloadError } from './errors.js';

/** The state settings that decide an issue's state. */
export type GithubStates = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** The fields of an issue object this tracker reads. */
export interface RawIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  html_url: string;
  labels: string[];
  assignee: string;
  issueType: string;
  isPullRequest: boolean;
  /** Open blockers the API counts (0 when it gives no summary). */
  blockedByCount: number;
  created_at: string;
  updated_at: string;
}

/** Reads one issue object; a value without the documented shape is a payload error. */
export function readRawIssue(value: unknown, what: string): RawIssue {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw payloadError(what, 'an issue is not an object');
  const v = value as Record<string, unknown>;
  if (typeof v.number !== 'number' || typeof v.title !== 'string')
    throw payloadError(what, 'an issue has no number or title');
  if (v.state !== 'open' && v.state !== 'closed')
    throw payloadError(what, `issue #${v.number} has no open/closed state`);
  const labels = Array.isArray(v.labels)
    ? v.labels
        .map((l) =>
          typeof l === 'string'
            ? l
            : typeof l === 'object' && l !== null
              ? (l as { name?: unknown }).name
              : '',
        )
        .filter((l): l is string => typeof l === 'string' && l !== '')
    : [];
  const assignees = Array.isArray(v.assignees) ? (v.assignees as { login?: unknown }[]) : [];
  const firstAssignee = assignees.find((a) => typeof a?.login === 'string')?.login;
  const type = v.type as { name?: unknown } | null | undefined;
  const summary = v.issue_dependencies_summary as
    | { blocked_by?: unknown; total_blocked_by?: unknown }
    | undefined;
  const blockedByCount = Number(summary?.total_blocked_by ?? summary?.blocked_by ?? 0) || 0;
  return {
    number: v.number,
    title: v.title,
    body: typeof v.body === 'string' ? v.body : null,
    state: v.state,
    html_url: typeof v.html_url === 'string' ? v.html_url : '',
    labels,
    assignee: typeof firstAssignee === 'string' ? firstAssignee : '',
    issueType: typeof type?.name === 'string' ? type.name : '',
    isPullRequest: v.pull_request !== undefined && v.pull_request !== null,
    blockedByCount,
    created_at: typeof v.created_at === 'string' ? v.created_at : '',
    updated_at: typeof v.updated_at === 'string' ? v.updated_at : '',
  };
}

/** Reads a list of issue objects. */
export function readRawIssues(
  value: unknown,
  what: string,
  onMalformed?: (error: TrackerError) => void,
): RawIssue[] {
  if (!Array.isArray(value)) throw payloadError(what, 'expected a list of issues');
  if (onMalformed === undefined) return value.map((item) => readRawIssue(item, what));
  // A listing survives one bad record: it is reported and left out, the rest are read.
  const out: RawIssue[] = [];
  for (const item of value) {
    try {
      out.push(readRawIssue(item, what));
    } catch (error) {
      if (!(error instanceof TrackerError)) throw error;
      onMalformed(error);
    }
  }
  return out;
}

/**
 * Reads an issue that blocks another. Only its number and state matter, so one whose title is
 * malformed still blocks: leaving it out would let the blocked issue run.
 */
export function readBlocker(value: unknown, what: string, states: GithubStates): BlockerRef {
  const v = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  const raw = readRawIssue(
    v === null ? value : { ...v, title: typeof v.title === 'string' ? v.title : '' },
    what,
  );
  return { id: String(raw.number), identifier: String(raw.number), state: stateOf(raw, states) };
}

/** Reads a list of comment objects. */
export function readComments(value: unknown, what: string): IssueComment[] {
  if (!Array.isArray(value)) throw payloadError(what, 'expected a list of comments');
  return value.map((item) => {
    const c = item as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null || (typeof c.id !== 'number' && typeof c.id !== 'string'))
      throw payloadError(what, 'a comment has no id');
    const user = c.user as { login?: unknown } | null | undefined;
    return {
      id: String(c.id),
      author: typeof user?.login === 'string' ? user.login : '',
      body: typeof c.body === 'string' ? c.body : '',
      createdAt: typeof c.created_at === 'string' ? c.created_at : '',
    };
  });
}

/** The configured states in resolution order, each with its role. */
export function stateOrder(states: GithubStates): string[] {
  const extra = [states.handoffState, states.blockedState].filter(
    (s): s is string => typeof s === 'string' && s.trim() !== '',
  );
  return [...states.activeStates, ...states.terminalStates, ...extra];
}

/** The issue's state from its labels and open/closed flag, in the configured spelling. */
export function stateOf(raw: Pick<RawIssue, 'labels' | 'state'>, states: GithubStates): string {
  const labels = new Set(raw.labels.map((l) => l.toLowerCase()));
  const match = stateOrder(states).find((s) => labels.has(s.trim().toLowerCase()));
  if (match !== undefined) return match;
  if (raw.state === 'open') return states.activeStates[0] ?? 'open';
  return states.terminalStates[0] ?? 'closed';
}

/** Labels other than state labels, lowercased: the state is reported as the state, not twice. */
export function topicLabels(labels: readonly string[], states: GithubStates): string[] {
  const stateLabels = new Set(stateOrder(states).map((s) => s.trim().toLowerCase()));
  return labels.map((l) => l.toLowerCase()).filter((l) => !stateLabels.has(l));
}

/** The normalised issue (`comments` null: not fetched). */
export function toIssue(
  raw: RawIssue,
  project: string,
  states: GithubStates,
  blockedBy: BlockerRef[] = [],
): Issue {
  const key = String(raw.number);
  return {
    id: key,
    identifier: key,
    displayId: `${project}#${key}`,
    title: raw.title,
    description: raw.body ?? '',
    priority: null,
    state: stateOf(raw, states),
    branchName: '',
    url: raw.html_url,
    labels: topicLabels(raw.labels, states),
    assignee: raw.assignee,
    issueType: raw.issueType,
    parent: null,
    comments: null,
    blockedBy,
    createdAt: raw.created_at,
    updatedAt: raw.updated_at,
  };
}
