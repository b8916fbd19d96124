/**
 * The one place that decides what a prompt template can read. Every name is always present
 * (`attempt` is null on a first run rather than missing) because strict variables turn a missing
 * name into an error, and a template must behave the same on every turn. `attempt` counts like
 * every other place (the first run is attempt 1, the next attempt 2) but reads as null on the
 * first, so `{% if attempt %}` tells a later attempt from the first.
 */

import path from 'node:path';
import type { Issue } from '../domain/issue.js';
import { issueTemplateView } from '../domain/issue.js';
import { SIGNAL_DIR } from '../domain/signal-dir.js';
import {
  NO_REACTION_VARIABLES,
  REACTION_VARIABLE_NAMES,
  type ReactionVariables,
} from './reaction-variables.js';

/** Everything a prompt template sees, in the snake_case a template author writes. */
export interface PromptVariables {
  /** The issue, as `issueTemplateView` maps it. */
  issue: Record<string, unknown>;
  /** The attempt number from 2 on; null on the first attempt (never absent). */
  attempt: number | null;
  run: {
    /** 1-based turn within this run. */
    turn: number;
    /** The configured turn budget for the run. */
    max_turns: number;
    /** True from the second turn on: the agent already has the first prompt in its context. */
    is_continuation: boolean;
  };
  workspace: {
    /** Absolute path of the issue's workspace, as the agent sees it. */
    path: string;
    /** Where the agent may write `blocked` or `needs-human-review` to stop after its turn. */
    status_file: string;
  };
  /** The red CI a reaction run should fix; null on every other run. */
  ci_failure: ReactionVariables['ci_failure'];
  /** The review feedback a reaction run should address; null on every other run. */
  review_comments: ReactionVariables['review_comments'];
  /** The base a reaction run should merge in; null on every other run. */
  merge_conflict: ReactionVariables['merge_conflict'];
  /** The tools this session can call (server, name, description); [] when it can call none. */
  tools: readonly PromptTool[];
}

/** One tool as a prompt may advertise it. */
export interface PromptTool {
  /** The tool server's name, as the runtime's configuration names it. */
  server: string;
  name: string;
  description: string;
}

/** The top-level names a template may read (documented in README). */
export const PROMPT_VARIABLE_NAMES = [
  'issue',
  'attempt',
  'run',
  'workspace',
  'tools',
  ...REACTION_VARIABLE_NAMES,
] as const;

/** What the caller knows about one turn. */
export interface PromptVariablesInput {
  issue: Issue;
  /** 1-based: the first run of a claim is attempt 1. */
  attempt: number;
  /** 1-based turn number. */
  turn: number;
  maxTurns: number;
  workspacePath: string;
  /** A reaction run's feedback; absent or null for a run from the tracker. */
  reaction?: ReactionVariables | null;
  /** The tools the session can call; absent = none. */
  tools?: readonly PromptTool[];
}

/** Builds the template variables for one turn; called by the worker before each render. */
export function promptVariables(input: PromptVariablesInput): PromptVariables {
  return {
    issue: issueTemplateView(input.issue),
    attempt: input.attempt > 1 ? input.attempt : null,
    run: { turn: input.turn, max_turns: input.maxTurns, is_continuation: input.turn > 1 },
    workspace: {
      path: input.workspacePath,
      status_file: path.posix.join(input.workspacePath, SIGNAL_DIR, 'status'),
    },
    tools: input.tools ?? [],
    ...(input.reaction ?? NO_REACTION_VARIABLES),
  };
}

/** A realistic issue with every field filled, rendered by `validate` to exercise every branch it can. */
export const SAMPLE_ISSUE: Issue = {
  id: 'I_kwDOJ0sample42',
  identifier: 'ENG-42',
  displayId: 'acme/api#42',
  title: 'Retry webhook deliveries that time out',
  description:
    'Webhook deliveries that time out are dropped today.\n\n' +
    'Retry them with exponential backoff (max 5 attempts) and record each attempt.',
  priority: 2,
  state: 'In Progress',
  branchName: 'eng-42-retry-webhook-deliveries',
  url: 'https://tracker.example.com/acme/api/issues/42',
  labels: ['bug', 'webhooks'],
  assignee: 'dana',
  issueType: 'Bug',
  parent: { id: 'I_kwDOJ0sample40', identifier: 'ENG-40' },
  comments: [
    {
      id: 'IC_sample1',
      author: 'lee',
      body: 'The 30 s timeout in the sender is the culprit; see the delivery logs from Tuesday.',
      createdAt: '2025-03-04T09:15:00Z',
    },
    {
      id: 'IC_sample2',
      author: 'dana',
      body: 'Agreed. Keep the payload unchanged so receivers can deduplicate by delivery id.',
      createdAt: '2025-03-04T11:02:00Z',
    },
  ],
  blockedBy: [{ id: 'I_kwDOJ0sample41', identifier: 'ENG-41', state: 'Done' }],
  createdAt: '2025-03-03T16:40:00Z',
  updatedAt: '2025-03-04T11:02:00Z',
};
