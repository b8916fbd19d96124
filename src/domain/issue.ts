/**
 * The normalised issue every tracker produces and every layer above reads.
 * Trackers differ wildly; this shape is the one promise they all keep, so the
 * orchestrator never learns which tracker it is talking to.
 */

/** A reference to another issue that blocks this one. `state` "" means unknown (treated as not terminal). */
export interface BlockerRef {
  id: string;
  identifier: string;
  state: string;
}

/** A parent issue reference, when the tracker has one. */
export interface ParentRef {
  id: string;
  identifier: string;
}

/** One comment on an issue. `createdAt` is an ISO-8601 string or "" when the tracker gives none. */
export interface IssueComment {
  id: string;
  author: string;
  body: string;
  createdAt: string;
}

export interface Issue {
  /** Stable internal id (tracker key for refreshes). */
  id: string;
  /** Human key: used for workspace names, logs and API lookups. */
  identifier: string;
  /** Qualified display form (`owner/repo#9`); equals `identifier` where the tracker has none. */
  displayId: string;
  title: string;
  description: string;
  /** Lower is more urgent; null = the tracker gives none. */
  priority: number | null;
  /** Original casing; every comparison lowercases both sides. */
  state: string;
  branchName: string;
  url: string;
  /** Always lowercased, never null. */
  labels: string[];
  assignee: string;
  issueType: string;
  parent: ParentRef | null;
  /** null = not fetched; [] = fetched, none. */
  comments: IssueComment[] | null;
  blockedBy: BlockerRef[];
  /** ISO-8601 or "". */
  createdAt: string;
  updatedAt: string;
}

/** The snake_case map a prompt template sees as `issue`. */
export function issueTemplateView(issue: Issue): Record<string, unknown> {
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description,
    priority: issue.priority,
    state: issue.state,
    branch_name: issue.branchName,
    url: issue.url,
    labels: [...issue.labels],
    assignee: issue.assignee,
    issue_type: issue.issueType,
    parent: issue.parent ? { id: issue.parent.id, identifier: issue.parent.identifier } : null,
    comments:
      issue.comments === null
        ? null
        : issue.comments.map((c) => ({ id: c.id, author: c.author, body: c.body, created_at: c.createdAt })),
    blocked_by: issue.blockedBy.map((b) => ({ id: b.id, identifier: b.identifier, state: b.state })),
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
  };
}

/** Keys a template may read under `issue` (kept beside the view so the two cannot drift). */
export const ISSUE_TEMPLATE_KEYS = [
  'id',
  'identifier',
  'title',
  'description',
  'priority',
  'state',
  'branch_name',
  'url',
  'labels',
  'assignee',
  'issue_type',
  'parent',
  'comments',
  'blocked_by',
  'created_at',
  'updated_at',
] as const;
