/**
 * Counts every tracker call by operation and result, for `tracker_requests_total`.
 * The wrapper sits between the orchestrator and the adapter so each tracker kind
 * is counted the same way without knowing about metrics; it passes results and
 * errors through untouched (the very same error object is rethrown), so the
 * orchestrator's retry decisions, which read the error's kind, do not change.
 */
import type { TrackerAdapter, TrackerQueryTool } from '../domain/tracker.js';

export type TrackerRequestResult = 'success' | 'error';

/** The operation label of each contract method: a closed set, so the label stays bounded. */
export const TRACKER_OPERATIONS: Readonly<Record<keyof TrackerAdapter, string>> = Object.freeze({
  fetchCandidateIssues: 'fetch_candidate_issues',
  fetchIssueById: 'fetch_issue_by_id',
  fetchIssuesByStates: 'fetch_issues_by_states',
  fetchIssueStatesByIds: 'fetch_issue_states_by_ids',
  fetchIssueStatesByIdentifiers: 'fetch_issue_states_by_identifiers',
  fetchIssueComments: 'fetch_issue_comments',
  transitionIssue: 'transition_issue',
  commentIssue: 'comment_issue',
  addLabel: 'add_label',
  queryTool: 'query',
});

/**
 * A tracker that calls `record(operation, result)` once per call, after the call settles
 * (success when it resolves, error when it throws or rejects), then returns what `tracker` did.
 */
export function instrumentTracker(
  tracker: TrackerAdapter,
  record: (operation: string, result: TrackerRequestResult) => void,
): TrackerAdapter {
  const call = async <T>(method: keyof TrackerAdapter, run: () => Promise<T>): Promise<T> => {
    let value: T;
    try {
      value = await run();
    } catch (error) {
      record(TRACKER_OPERATIONS[method], 'error');
      throw error;
    }
    record(TRACKER_OPERATIONS[method], 'success');
    return value;
  };
  const tool = tracker.queryTool;
  return {
    fetchCandidateIssues: () => call('fetchCandidateIssues', () => tracker.fetchCandidateIssues()),
    fetchIssueById: (id) => call('fetchIssueById', () => tracker.fetchIssueById(id)),
    fetchIssuesByStates: (states) => call('fetchIssuesByStates', () => tracker.fetchIssuesByStates(states)),
    fetchIssueStatesByIds: (ids) => call('fetchIssueStatesByIds', () => tracker.fetchIssueStatesByIds(ids)),
    fetchIssueStatesByIdentifiers: (identifiers) =>
      call('fetchIssueStatesByIdentifiers', () => tracker.fetchIssueStatesByIdentifiers(identifiers)),
    fetchIssueComments: (id) => call('fetchIssueComments', () => tracker.fetchIssueComments(id)),
    transitionIssue: (id, state) => call('transitionIssue', () => tracker.transitionIssue(id, state)),
    commentIssue: (id, body) => call('commentIssue', () => tracker.commentIssue(id, body)),
    addLabel: (id, label) => call('addLabel', () => tracker.addLabel(id, label)),
    ...(tool === undefined ? {} : { queryTool: countedQueryTool(tool, record) }),
  };
}

/** The query tool, counted once per query; a refusal is the tracker working, only a failure is an error. */
function countedQueryTool(
  tool: TrackerQueryTool,
  record: (operation: string, result: TrackerRequestResult) => void,
): TrackerQueryTool {
  return {
    name: tool.name,
    description: tool.description,
    run: async (query, variables) => {
      const answer = await tool.run(query, variables);
      record(TRACKER_OPERATIONS.queryTool, !answer.ok && answer.reason === 'failed' ? 'error' : 'success');
      return answer;
    },
  };
}
