/**
 * Every GraphQL document the Linear tracker sends, in one place, written against Linear's
 * public schema (the fake server in the tests validates them against the same names and
 * types, so a misspelt field or a variable of the wrong type fails there as it would at
 * Linear). Nested connections ask for a bounded first page and its `hasNextPage`: a query's
 * cost grows with every nested page size, and Linear refuses queries past its complexity cap.
 */

/** Labels and inverse relations read per issue (a warning names an issue with more). */
export const NESTED_PAGE_SIZE = 25;
/** Comments read per page of an issue's comments. */
export const COMMENT_PAGE_SIZE = 50;

const ISSUE_FIELDS = `
fragment IssueFields on Issue {
  id
  identifier
  title
  description
  priority
  branchName
  url
  createdAt
  updatedAt
  state { name }
  assignee { id }
  parent { id identifier }
  labels(first: ${NESTED_PAGE_SIZE}) { nodes { name } pageInfo { hasNextPage } }
  inverseRelations(first: ${NESTED_PAGE_SIZE}) {
    nodes { type issue { id identifier state { name } } }
    pageInfo { hasNextPage }
  }
}`;

const COMMENT_FIELDS = `
fragment CommentFields on Comment {
  id
  body
  createdAt
  user { name displayName }
}`;

/** Issues of one project whose state name matches one of a list (case-insensitively), a page at a time. */
export const ISSUES_PAGE = `
query OrchestratorIssues($filter: IssueFilter!, $first: Int!, $after: String) {
  issues(filter: $filter, first: $first, after: $after) {
    nodes { ...IssueFields }
    pageInfo { hasNextPage endCursor }
  }
}
${ISSUE_FIELDS}`;

/** Current states of a batch of issues by id. */
export const ISSUE_STATES_BY_IDS = `
query OrchestratorIssueStates($projectSlug: String!, $ids: [ID!]!, $first: Int!, $after: String) {
  issues(
    filter: { project: { slugId: { eq: $projectSlug } }, id: { in: $ids } }
    first: $first
    after: $after
  ) {
    nodes { id identifier state { name } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** Current states of issues picked by an `or` of team key + number filters (identifiers). */
export const ISSUE_STATES_BY_FILTER = `
query OrchestratorIssueStatesByFilter($filter: IssueFilter!, $first: Int!, $after: String) {
  issues(filter: $filter, first: $first, after: $after) {
    nodes { id identifier state { name } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** One issue with its project (for the scope check) and its first page of comments. */
export const ISSUE_BY_ID = `
query OrchestratorIssue($id: String!, $commentsFirst: Int!) {
  issue(id: $id) {
    ...IssueFields
    project { slugId }
    comments(first: $commentsFirst) {
      nodes { ...CommentFields }
      pageInfo { hasNextPage endCursor }
    }
  }
}
${ISSUE_FIELDS}
${COMMENT_FIELDS}`;

/** A later page of one issue's comments. */
export const ISSUE_COMMENTS = `
query OrchestratorIssueComments($id: String!, $first: Int!, $after: String) {
  issue(id: $id) {
    id
    project { slugId }
    comments(first: $first, after: $after) {
      nodes { ...CommentFields }
      pageInfo { hasNextPage endCursor }
    }
  }
}
${COMMENT_FIELDS}`;

/** What a transition needs: the issue's state, project, and its team's workflow states of that name. */
export const TRANSITION_TARGET = `
query OrchestratorTransitionTarget($id: String!, $stateName: String!) {
  issue(id: $id) {
    id
    identifier
    project { slugId }
    state { id name }
    team {
      id
      key
      name
      states(filter: { name: { eqIgnoreCase: $stateName } }, first: 10) { nodes { id name } }
    }
  }
}`;

/** Moves an issue to a workflow state. */
export const ISSUE_SET_STATE = `
mutation OrchestratorSetState($id: String!, $stateId: String!) {
  issueUpdate(id: $id, input: { stateId: $stateId }) {
    success
    issue { id state { name } }
  }
}`;

/** Posts a comment. */
export const COMMENT_CREATE = `
mutation OrchestratorComment($issueId: String!, $body: String!) {
  commentCreate(input: { issueId: $issueId, body: $body }) {
    success
    comment { id }
  }
}`;

/** What adding a label needs: the issue's labels, project and team. */
export const LABEL_TARGET = `
query OrchestratorLabelTarget($id: String!) {
  issue(id: $id) {
    id
    project { slugId }
    team { id key name }
    labels(first: 250) { nodes { id name } }
  }
}`;

/** Labels of that name anywhere in the workspace, with the team each belongs to (null: workspace-wide). */
export const LABELS_NAMED = `
query OrchestratorLabelsNamed($name: String!) {
  issueLabels(filter: { name: { eqIgnoreCase: $name } }, first: 50) {
    nodes { id name team { id } }
  }
}`;

/** Adds one label to an issue, leaving the others alone. */
export const ISSUE_ADD_LABEL = `
mutation OrchestratorAddLabel($id: String!, $labelId: String!) {
  issueAddLabel(id: $id, labelId: $labelId) {
    success
  }
}`;

/** The user the API key belongs to. */
export const VIEWER = `
query OrchestratorViewer {
  viewer { id }
}`;
