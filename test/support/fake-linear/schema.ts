/**
 * The part of Linear's public GraphQL schema the fake serves. Type, field and argument names
 * and types follow Linear's published schema (`packages/sdk/src/schema.graphql` of
 * linear/linear), trimmed to what a tracker reads and writes (plus `organization`, a type
 * outside any project that `linear_graphql` must refuse): a query that names a field or
 * a filter Linear lacks, or passes a variable of the wrong type (`[String!]!` where Linear
 * wants `[ID!]`), fails validation here as it would there. Filters carry only the fields the
 * fake evaluates (filter.ts), so a filter it cannot honour is refused, never ignored.
 */
export const FAKE_LINEAR_SDL = /* GraphQL */ `
scalar DateTime

enum PaginationOrderBy {
  createdAt
  updatedAt
}

type PageInfo {
  endCursor: String
  hasNextPage: Boolean!
  hasPreviousPage: Boolean!
  startCursor: String
}

type User {
  active: Boolean!
  displayName: String!
  email: String!
  id: ID!
  isMe: Boolean!
  name: String!
}

type Team {
  id: ID!
  key: String!
  labels(after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueLabelConnection!
  name: String!
  states(after: String, before: String, filter: WorkflowStateFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): WorkflowStateConnection!
}

type TeamConnection {
  edges: [TeamEdge!]!
  nodes: [Team!]!
  pageInfo: PageInfo!
}

type TeamEdge {
  cursor: String!
  node: Team!
}

type WorkflowState {
  color: String!
  id: ID!
  name: String!
  position: Float!
  team: Team!
  type: String!
}

type WorkflowStateConnection {
  edges: [WorkflowStateEdge!]!
  nodes: [WorkflowState!]!
  pageInfo: PageInfo!
}

type WorkflowStateEdge {
  cursor: String!
  node: WorkflowState!
}

type Organization {
  id: ID!
  name: String!
  urlKey: String!
}

type Project {
  id: ID!
  name: String!
  slugId: String!
  url: String!
}

type IssueLabel {
  color: String!
  createdAt: DateTime!
  id: ID!
  isGroup: Boolean!
  name: String!
  team: Team
}

type IssueLabelConnection {
  edges: [IssueLabelEdge!]!
  nodes: [IssueLabel!]!
  pageInfo: PageInfo!
}

type IssueLabelEdge {
  cursor: String!
  node: IssueLabel!
}

type Comment {
  body: String!
  createdAt: DateTime!
  id: ID!
  issue: Issue
  updatedAt: DateTime!
  user: User
}

type CommentConnection {
  edges: [CommentEdge!]!
  nodes: [Comment!]!
  pageInfo: PageInfo!
}

type CommentEdge {
  cursor: String!
  node: Comment!
}

type IssueRelation {
  createdAt: DateTime!
  id: ID!
  issue: Issue!
  relatedIssue: Issue!
  type: String!
}

type IssueRelationConnection {
  edges: [IssueRelationEdge!]!
  nodes: [IssueRelation!]!
  pageInfo: PageInfo!
}

type IssueRelationEdge {
  cursor: String!
  node: IssueRelation!
}

type Issue {
  archivedAt: DateTime
  assignee: User
  branchName: String!
  children(after: String, before: String, filter: IssueFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueConnection!
  comments(after: String, before: String, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): CommentConnection!
  createdAt: DateTime!
  description: String
  id: ID!
  identifier: String!
  inverseRelations(after: String, before: String, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueRelationConnection!
  labelIds: [String!]!
  labels(after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueLabelConnection!
  number: Float!
  parent: Issue
  priority: Float!
  priorityLabel: String!
  project: Project
  relations(after: String, before: String, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueRelationConnection!
  state: WorkflowState!
  team: Team!
  title: String!
  updatedAt: DateTime!
  url: String!
}

type IssueConnection {
  edges: [IssueEdge!]!
  nodes: [Issue!]!
  pageInfo: PageInfo!
}

type IssueEdge {
  cursor: String!
  node: Issue!
}

input BooleanComparator {
  eq: Boolean
  neq: Boolean
}

input IDComparator {
  eq: ID
  in: [ID!]
  neq: ID
  nin: [ID!]
}

input StringComparator {
  contains: String
  containsIgnoreCase: String
  endsWith: String
  eq: String
  eqIgnoreCase: String
  in: [String!]
  neq: String
  neqIgnoreCase: String
  nin: [String!]
  notContains: String
  startsWith: String
}

input NumberComparator {
  eq: Float
  gt: Float
  gte: Float
  in: [Float!]
  lt: Float
  lte: Float
  neq: Float
  nin: [Float!]
}

input NullableNumberComparator {
  eq: Float
  gt: Float
  gte: Float
  in: [Float!]
  lt: Float
  lte: Float
  neq: Float
  nin: [Float!]
  null: Boolean
}

input TeamFilter {
  and: [TeamFilter!]
  id: IDComparator
  key: StringComparator
  name: StringComparator
  or: [TeamFilter!]
}

input NullableTeamFilter {
  and: [NullableTeamFilter!]
  id: IDComparator
  key: StringComparator
  name: StringComparator
  null: Boolean
  or: [NullableTeamFilter!]
}

input WorkflowStateFilter {
  and: [WorkflowStateFilter!]
  id: IDComparator
  name: StringComparator
  or: [WorkflowStateFilter!]
  team: TeamFilter
  type: StringComparator
}

input NullableProjectFilter {
  and: [NullableProjectFilter!]
  id: IDComparator
  name: StringComparator
  null: Boolean
  or: [NullableProjectFilter!]
  slugId: StringComparator
}

input NullableUserFilter {
  and: [NullableUserFilter!]
  displayName: StringComparator
  email: StringComparator
  id: IDComparator
  isMe: BooleanComparator
  name: StringComparator
  null: Boolean
  or: [NullableUserFilter!]
}

input IssueLabelFilter {
  and: [IssueLabelFilter!]
  id: IDComparator
  name: StringComparator
  or: [IssueLabelFilter!]
  team: NullableTeamFilter
}

input IssueFilter {
  and: [IssueFilter!]
  assignee: NullableUserFilter
  id: IDComparator
  number: NumberComparator
  or: [IssueFilter!]
  parent: NullableIssueFilter
  priority: NullableNumberComparator
  project: NullableProjectFilter
  state: WorkflowStateFilter
  team: TeamFilter
  title: StringComparator
}

input NullableIssueFilter {
  and: [NullableIssueFilter!]
  assignee: NullableUserFilter
  id: IDComparator
  null: Boolean
  number: NumberComparator
  or: [NullableIssueFilter!]
  parent: NullableIssueFilter
  priority: NullableNumberComparator
  project: NullableProjectFilter
  state: WorkflowStateFilter
  team: TeamFilter
  title: StringComparator
}

input IssueUpdateInput {
  addedLabelIds: [String!]
  assigneeId: String
  description: String
  labelIds: [String!]
  parentId: String
  priority: Int
  projectId: String
  removedLabelIds: [String!]
  stateId: String
  teamId: String
  title: String
}

input CommentCreateInput {
  body: String
  id: String
  issueId: String
  parentId: String
}

type IssuePayload {
  issue: Issue
  lastSyncId: Float!
  success: Boolean!
}

type CommentPayload {
  comment: Comment!
  lastSyncId: Float!
  success: Boolean!
}

type Query {
  issue(id: String!): Issue!
  issueLabels(after: String, before: String, filter: IssueLabelFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueLabelConnection!
  issues(after: String, before: String, filter: IssueFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): IssueConnection!
  organization: Organization!
  project(id: String!): Project!
  team(id: String!): Team!
  teams(after: String, before: String, filter: TeamFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): TeamConnection!
  viewer: User!
  workflowStates(after: String, before: String, filter: WorkflowStateFilter, first: Int, includeArchived: Boolean, last: Int, orderBy: PaginationOrderBy): WorkflowStateConnection!
}

type Mutation {
  commentCreate(input: CommentCreateInput!): CommentPayload!
  issueAddLabel(id: String!, labelId: String!): IssuePayload!
  issueUpdate(id: String!, input: IssueUpdateInput!): IssuePayload!
}
`;
