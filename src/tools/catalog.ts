/**
 * The tools an agent sees: name, the description it reads, the input schema, and whether the
 * tool writes to the tracker. One list, so the MCP listing, argument checking and any prompt
 * or docs that name the tools cannot drift apart. Schemas are strict: an unknown field is an
 * error, because a misspelt `issue_id` silently ignored would act on the wrong issue.
 */
import { z } from 'zod';

/** Most results a listing tool returns in one call. */
export const MAX_LIST_LIMIT = 50;
/** Results a listing tool returns when the agent gives no limit. */
export const DEFAULT_LIST_LIMIT = 10;

const nonBlank = z.string().refine((s) => s.trim() !== '', { message: 'must not be blank' });
const listLimit = z.int().min(1).max(MAX_LIST_LIMIT).optional();

export const TOOL_INPUTS = {
  tracker_issue: z
    .strictObject({
      issue_id: nonBlank.optional().describe("Tracker id of the issue; omit for the session's own issue."),
      identifier: nonBlank.optional().describe('Human key of the issue (e.g. ABC-12); omit for your own.'),
    })
    .refine((a) => a.issue_id === undefined || a.identifier === undefined, {
      message: 'give issue_id or identifier, not both',
    }),
  tracker_comment: z.strictObject({
    body: nonBlank.describe('Plain-text comment.'),
    issue_id: nonBlank.optional().describe("Must be the session's own issue when given."),
  }),
  tracker_transition: z.strictObject({
    state: nonBlank.describe('Target state, one of the workflow’s configured states (any casing).'),
    issue_id: nonBlank.optional().describe("Must be the session's own issue when given."),
  }),
  tracker_search: z.strictObject({
    query: nonBlank.describe('Search text.'),
    limit: listLimit.describe(`Most results, 1–${MAX_LIST_LIMIT}; default ${DEFAULT_LIST_LIMIT}.`),
  }),
  run_status: z.strictObject({}),
  ask_human: z.strictObject({
    question: nonBlank.describe('The question, self-contained: a human reads it on the issue.'),
  }),
  workspace_history: z.strictObject({
    limit: listLimit.describe(`Most runs, 1–${MAX_LIST_LIMIT}; default ${DEFAULT_LIST_LIMIT}.`),
  }),
} as const;

export type ToolName = keyof typeof TOOL_INPUTS;
export type ToolInput<N extends ToolName> = z.infer<(typeof TOOL_INPUTS)[N]>;

/** One tool as the catalog declares it. */
export interface ToolEntry {
  name: ToolName;
  /** One paragraph the agent reads to decide when to call it. */
  description: string;
  input: z.ZodType;
  /** True when the tool changes the tracker (comment, transition, parking). */
  writes: boolean;
}

const DESCRIPTIONS: Readonly<Record<ToolName, { description: string; writes: boolean }>> = {
  tracker_issue: {
    writes: false,
    description:
      'Read an issue from the tracker with its current state, labels and comments. With no arguments ' +
      'it returns the issue you are working on; re-read it to see new comments or a changed state. ' +
      'Reading another issue (by issue_id or identifier) works only when the workflow allows it.',
  },
  tracker_comment: {
    writes: true,
    description:
      'Post a plain-text comment on the issue you are working on, for progress notes or a summary ' +
      'of what you changed. Comments longer than the workflow’s limit are refused, not cut: ' +
      'shorten and call again. You cannot comment on other issues.',
  },
  tracker_transition: {
    writes: true,
    description:
      'Transition (move) the issue you are working on to another state, for example to hand it off for review ' +
      'when you are done. Only the states named in the workflow are accepted; a refusal lists them. ' +
      'You cannot move other issues.',
  },
  tracker_search: {
    writes: false,
    description:
      'Search the configured project’s issues by text, for related or duplicate work. Returns short ' +
      'summaries (id, identifier, title, state, url, labels); read one in full with tracker_issue.',
  },
  run_status: {
    writes: false,
    description:
      'Report this run’s progress: the current turn, elapsed time, tokens used, cost when known ' +
      '(null when the runtime cannot price it) and each budget with what is left. Check it before ' +
      'starting long work.',
  },
  ask_human: {
    writes: true,
    description:
      'Ask a human a question you cannot answer from the code or the issue. The question is posted ' +
      'on your issue and the issue is parked until someone answers, so finish your turn after ' +
      'asking. Use it for decisions, not for status updates.',
  },
  workspace_history: {
    writes: false,
    description:
      'List earlier runs on this issue, newest first: attempt, start and end time, how each ended, ' +
      'turns, tokens and the error if one failed. Use it to avoid repeating an approach that failed.',
  },
};

/** Every tool, in a stable order (by name). */
export const TOOL_CATALOG: readonly ToolEntry[] = (Object.keys(TOOL_INPUTS) as ToolName[])
  .sort()
  .map((name) => ({ name, input: TOOL_INPUTS[name], ...DESCRIPTIONS[name] }));

/** The input of a tracker's query tool, whatever the tracker names it. */
export const QUERY_TOOL_INPUT = z.strictObject({
  query: nonBlank.describe('One read-only query document.'),
  variables: z.record(z.string(), z.unknown()).optional().describe('Values of the query’s variables.'),
});

/** A tool a session is offered: a catalog tool, or its tracker's query tool. */
export interface OfferedTool {
  name: string;
  description: string;
  input: z.ZodType;
  writes: boolean;
}

/** The tools a session is offered: the catalog, then the tracker's query tool when it has one. */
export function offeredTools(queryTool?: { name: string; description: string }): OfferedTool[] {
  const catalog: OfferedTool[] = [...TOOL_CATALOG];
  return queryTool === undefined
    ? catalog
    : [
        ...catalog,
        { name: queryTool.name, description: queryTool.description, input: QUERY_TOOL_INPUT, writes: false },
      ];
}

/** True when `name` is a catalog tool. */
export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(TOOL_INPUTS, name);
}
