/**
 * From GitLab's issue, note and link objects to the normalised issue. Pure: no I/O.
 *
 * The state is a scoped label: with the prefix `workflow::`, state `In Progress` is the
 * label `workflow::in progress` (compared without case). An open issue takes the first
 * configured state its labels name (active, terminal, handoff, blocked, in that order) and
 * is in the first active state without one. A closed issue is always terminal: the terminal
 * state its labels name, else the first terminal state; a person who closes an issue in the
 * UI rarely removes its workflow label, and a closed issue must never look like work to do.
 *
 * The priority is a scoped label too (`priority::2` → 2, lower is more urgent). Weight is
 * not used: it estimates size, not urgency, and ordering by it would starve large issues.
 * State and priority labels are reported as the state and the priority, so they are left
 * out of `labels`.
 */

import { TrackerError } from '../../domain/errors.js';
import type { BlockerRef, Issue, IssueComment } from '../../domain/issue.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { payloadError } from './errors.js';

/** The state settings that decide an issue's state. */
export type GitlabStates = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** How labels carry states and priorities. */
export interface LabelScheme {
  states: GitlabStates;
  stateLabelPrefix: string;
  priorityLabelPrefix: string;
}

/** The fields of an issue object this tracker reads. */
export interface RawIssue {
  /** The global id. */
  id: number;
  /** The project-scoped number (`#12`). */
  iid: number;
  title: string;
  description: string;
  state: 'opened' | 'closed';
  webUrl: string;
  labels: string[];
  assignee: string;
  issueType: string;
  createdAt: string;
  updatedAt: string;
}

/** Reads one issue object; a value without the documented shape is a payload error. */
export function readRawIssue(value: unknown, what: string): RawIssue {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw payloadError(what, 'an issue is not an object');
  const v = value as Record<string, unknown>;
  if (!Number.isInteger(v.id) || !Number.isInteger(v.iid))
    throw payloadError(what, 'an issue has no id or iid');
  if (typeof v.title !== 'string') throw payloadError(what, `issue #${v.iid} has no title`);
  if (v.state !== 'opened' && v.state !== 'closed')
    throw payloadError(what, `issue #${v.iid} has no opened/closed state`);
  const labels = Array.isArray(v.labels)
    ? v.labels
        .map((l) => (typeof l === 'string' ? l : (l as { name?: unknown } | null)?.name))
        .filter((l): l is string => typeof l === 'string' && l !== '')
    : [];
  const assignees = Array.isArray(v.assignees) ? (v.assignees as { username?: unknown }[]) : [];
  const first = assignees.find((a) => typeof a?.username === 'string')?.username;
  return {
    id: v.id as number,
    iid: v.iid as number,
    title: v.title,
    description: typeof v.description === 'string' ? v.description : '',
    state: v.state,
    webUrl: typeof v.web_url === 'string' ? v.web_url : '',
    labels,
    assignee: typeof first === 'string' ? first : '',
    issueType:
      typeof v.issue_type === 'string'
        ? v.issue_type
        : typeof v.type === 'string'
          ? v.type.toLowerCase()
          : '',
    createdAt: typeof v.created_at === 'string' ? v.created_at : '',
    updatedAt: typeof v.updated_at === 'string' ? v.updated_at : '',
  };
}

/** Reads a list of issue objects; with `onMalformed`, a bad record is reported and left out. */
export function readRawIssues(
  value: unknown,
  what: string,
  onMalformed?: (error: TrackerError) => void,
): RawIssue[] {
  if (!Array.isArray(value)) throw payloadError(what, 'expected a list of issues');
  const out: RawIssue[] = [];
  for (const item of value) {
    try {
      out.push(readRawIssue(item, what));
    } catch (error) {
      if (!(error instanceof TrackerError) || onMalformed === undefined) throw error;
      onMalformed(error);
    }
  }
  return out;
}

/** Reads a list of notes: user comments oldest first, system notes (label and state changes) left out. */
export function readNotes(value: unknown, what: string): IssueComment[] {
  if (!Array.isArray(value)) throw payloadError(what, 'expected a list of notes');
  const out: IssueComment[] = [];
  for (const item of value) {
    const n = item as Record<string, unknown> | null;
    if (typeof n !== 'object' || n === null || !Number.isInteger(n.id))
      throw payloadError(what, 'a note has no id');
    if (n.system === true) continue;
    const author = n.author as { username?: unknown } | null | undefined;
    out.push({
      id: String(n.id),
      author: typeof author?.username === 'string' ? author.username : '',
      body: typeof n.body === 'string' ? n.body : '',
      createdAt: typeof n.created_at === 'string' ? n.created_at : '',
    });
  }
  return out;
}

/** The issues that block this one: linked issues whose `link_type` is `is_blocked_by`. */
export function readBlockers(value: unknown, what: string, scheme: LabelScheme): BlockerRef[] {
  if (!Array.isArray(value)) throw payloadError(what, 'expected a list of linked issues');
  return value
    .filter((item) => (item as { link_type?: unknown } | null)?.link_type === 'is_blocked_by')
    .map((item) => {
      // Only the blocker's ids and state matter here: a blocker with a bad title still blocks.
      const ids = idsOf(item);
      if (ids === null) throw payloadError(what, 'a linked issue has no id or iid');
      const v = item as { labels?: unknown; state?: unknown };
      const state = v.state === 'opened' || v.state === 'closed' ? v.state : null;
      const labels = Array.isArray(v.labels)
        ? v.labels.filter((l): l is string => typeof l === 'string')
        : [];
      return {
        id: String(ids.id),
        identifier: String(ids.iid),
        state: state === null ? '' : stateOf({ labels, state }, scheme),
      };
    });
}

/** The global id and iid of an issue object, or null when either is missing. */
export function idsOf(value: unknown): { id: number; iid: number } | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { id?: unknown; iid?: unknown };
  return Number.isInteger(v.id) && Number.isInteger(v.iid)
    ? { id: v.id as number, iid: v.iid as number }
    : null;
}

/** The configured states in resolution order. */
export function stateOrder(states: GitlabStates): string[] {
  const extra = [states.handoffState, states.blockedState].filter(
    (s): s is string => typeof s === 'string' && s.trim() !== '',
  );
  return [...states.activeStates, ...states.terminalStates, ...extra];
}

/** The label that carries `state` (lowercased; GitLab label names are compared without case here). */
export function stateLabel(state: string, prefix: string): string {
  return `${prefix}${state.trim()}`.toLowerCase();
}

/** The issue's state from its labels and opened/closed flag, in the configured spelling. */
export function stateOf(raw: Pick<RawIssue, 'labels' | 'state'>, scheme: LabelScheme): string {
  const { states, stateLabelPrefix } = scheme;
  const labels = new Set(raw.labels.map((l) => l.toLowerCase()));
  const named = (s: string) => labels.has(stateLabel(s, stateLabelPrefix));
  if (raw.state === 'closed') {
    return states.terminalStates.find(named) ?? states.terminalStates[0] ?? 'closed';
  }
  return stateOrder(states).find(named) ?? states.activeStates[0] ?? 'opened';
}

/** The priority from a `<prefix>N` label (the smallest when several); null when none. */
export function priorityOf(labels: readonly string[], prefix: string): number | null {
  if (prefix === '') return null;
  const lowerPrefix = prefix.toLowerCase();
  let best: number | null = null;
  for (const label of labels) {
    const lower = label.toLowerCase();
    if (!lower.startsWith(lowerPrefix)) continue;
    const text = lower.slice(lowerPrefix.length).trim();
    if (!/^\d+$/.test(text)) continue;
    const n = Number(text);
    if (best === null || n < best) best = n;
  }
  return best;
}

/** True for a label that carries a state or a priority, and so is not reported in `labels`. */
export function isControlLabel(label: string, scheme: LabelScheme): boolean {
  const lower = label.toLowerCase();
  const states = [...stateOrder(scheme.states), scheme.states.inProgressState ?? ''].filter(
    (s) => s.trim() !== '',
  );
  if (states.some((s) => stateLabel(s, scheme.stateLabelPrefix) === lower)) return true;
  return priorityOf([label], scheme.priorityLabelPrefix) !== null;
}

/** The normalised issue (`comments` null: not fetched). */
export function toIssue(
  raw: RawIssue,
  project: string,
  scheme: LabelScheme,
  blockedBy: BlockerRef[] = [],
): Issue {
  return {
    id: String(raw.id),
    identifier: String(raw.iid),
    displayId: `${project}#${raw.iid}`,
    title: raw.title,
    description: raw.description,
    priority: priorityOf(raw.labels, scheme.priorityLabelPrefix),
    state: stateOf(raw, scheme),
    branchName: '',
    url: raw.webUrl,
    labels: raw.labels.filter((l) => !isControlLabel(l, scheme)).map((l) => l.toLowerCase()),
    assignee: raw.assignee,
    issueType: raw.issueType,
    parent: null,
    comments: null,
    blockedBy,
    createdAt: raw.createdAt,
    updatedAt: raw.updatedAt,
  };
}
