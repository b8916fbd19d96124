/** An in-memory ToolBackend for the tool-server tests: two issues, and a log of every write. */
import type { Issue } from '../../src/domain/issue.js';
import type {
  ToolBackend,
  ToolHistoryEntry,
  ToolPolicy,
  ToolRunStatus,
  ToolSession,
} from '../../src/tools/ports.js';

export function makeIssue(id: string, identifier: string, over: Partial<Issue> = {}): Issue {
  return {
    id,
    identifier,
    displayId: identifier,
    title: `Title of ${identifier}`,
    description: `Description of ${identifier}`,
    priority: 2,
    state: 'Todo',
    branchName: '',
    url: `https://tracker.example/${identifier}`,
    labels: ['bug'],
    assignee: '',
    issueType: '',
    parent: null,
    comments: [{ id: 'c1', author: 'ana', body: 'first', createdAt: '2026-01-01T00:00:00Z' }],
    blockedBy: [],
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-02T00:00:00Z',
    ...over,
  };
}

export const SESSION_A: ToolSession = { issueId: 'id-a', identifier: 'PRJ-1', runId: 7, startedAtMs: 1_000 };
export const SESSION_B: ToolSession = { issueId: 'id-b', identifier: 'PRJ-2', runId: 8, startedAtMs: 2_000 };

export const POLICY: ToolPolicy = {
  configuredStates: ['Todo', 'In Progress', 'Human Review', 'Done'],
  allowOtherIssues: false,
  maxCommentChars: 20,
};

export const RUN_STATUS: ToolRunStatus = {
  turn: 3,
  elapsedMs: 65_000,
  tokens: { input: 1_200, output: 300, total: 1_500 },
  costUsd: null,
  budgets: [{ name: 'tokens', used: 1_500, limit: 10_000, left: 8_500 }],
};

export const HISTORY: ToolHistoryEntry[] = [
  {
    attempt: 2,
    startedAt: '2026-01-03T00:00:00Z',
    endedAt: '2026-01-03T00:10:00Z',
    exitKind: 'failed',
    turns: 4,
    tokens: 900,
    error: 'turn_timeout: no output for 300s',
  },
  {
    attempt: 1,
    startedAt: '2026-01-02T00:00:00Z',
    endedAt: '2026-01-02T00:05:00Z',
    exitKind: 'succeeded',
    turns: 2,
    tokens: null,
    error: null,
  },
];

export type Write =
  | { op: 'comment'; issueId: string; body: string }
  | { op: 'transition'; issueId: string; state: string }
  | { op: 'askHuman'; issueId: string; question: string };

export interface FakeBackend extends ToolBackend {
  writes: Write[];
  searches: { query: string; limit: number }[];
  historyAsks: { issueId: string; limit: number }[];
}

export function fakeBackend(): FakeBackend {
  const issues = new Map<string, Issue>([
    ['id-a', makeIssue('id-a', 'PRJ-1')],
    ['id-b', makeIssue('id-b', 'PRJ-2', { state: 'In Progress', labels: [] })],
  ]);
  const writes: Write[] = [];
  const searches: { query: string; limit: number }[] = [];
  const historyAsks: { issueId: string; limit: number }[] = [];
  const get = (id: string): Issue => {
    const issue = issues.get(id);
    if (!issue) throw new Error(`tracker: tracker_not_found: no issue ${id}`);
    return issue;
  };
  return {
    writes,
    searches,
    historyAsks,
    issue: async (id) => get(id),
    issueByIdentifier: async (identifier) =>
      [...issues.values()].find((i) => i.identifier.toLowerCase() === identifier.toLowerCase()) ?? null,
    comment: async (issueId, body) => {
      get(issueId);
      writes.push({ op: 'comment', issueId, body });
    },
    transition: async (issueId, state) => {
      get(issueId);
      writes.push({ op: 'transition', issueId, state });
    },
    search: async (query, limit) => {
      searches.push({ query, limit });
      return [...issues.values()].filter((i) => i.title.includes(query)).slice(0, limit);
    },
    runStatus: async () => RUN_STATUS,
    history: async (issueId, limit) => {
      historyAsks.push({ issueId, limit });
      return HISTORY.slice(0, limit);
    },
    askHuman: async (session, question) => {
      writes.push({ op: 'askHuman', issueId: session.issueId, question });
    },
  };
}
