/**
 * The comments the orchestrator posted (or tried to post) on each issue since the service
 * started, fed by its observations, for the issue page. Kept in memory and bounded, because a
 * service that runs for months comments on thousands of issues and a completion comment carries
 * the agent's final message: the newest comments of the issues commented on most recently, each
 * body clipped. The tracker keeps the full record; this is what the page can show without
 * asking it.
 */
import type { CommentLifecycle, Observation, TrackerWriteResult } from '../orchestrator/observations.js';

/** Comments kept per issue (the newest). */
export const COMMENTS_PER_ISSUE = 20;
/** Issues whose comments are kept (those commented on most recently). */
export const ISSUES_WITH_COMMENTS = 200;
/** Characters of a body kept. */
export const COMMENT_BODY_CHARS = 4_000;

export interface IssueComment {
  atMs: number;
  lifecycle: CommentLifecycle;
  /** `error`: the tracker refused it, so the issue never showed it. */
  result: TrackerWriteResult;
  body: string;
}

export class IssueComments {
  /** Insertion order is recency: an issue commented on moves to the end. */
  readonly #byIssue = new Map<string, IssueComment[]>();

  constructor(private readonly nowMs: () => number) {}

  observe(observation: Observation): void {
    if (observation.type !== 'comment') return;
    const { issueId, lifecycle, result, body } = observation;
    const list = this.#byIssue.get(issueId) ?? [];
    this.#byIssue.delete(issueId);
    const clipped = body.length > COMMENT_BODY_CHARS ? `${body.slice(0, COMMENT_BODY_CHARS - 1)}…` : body;
    list.push({ atMs: this.nowMs(), lifecycle, result, body: clipped });
    if (list.length > COMMENTS_PER_ISSUE) list.splice(0, list.length - COMMENTS_PER_ISSUE);
    this.#byIssue.set(issueId, list);
    for (const id of this.#byIssue.keys()) {
      if (this.#byIssue.size <= ISSUES_WITH_COMMENTS) break;
      this.#byIssue.delete(id);
    }
  }

  /** The issue's kept comments, oldest first; [] when none. */
  for(issueId: string): IssueComment[] {
    return [...(this.#byIssue.get(issueId) ?? [])];
  }
}
