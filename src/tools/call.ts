/**
 * Runs one tool call for one session and returns the outcome as a value.
 *
 * Everything an agent sends is untrusted: arguments are checked against the catalog schema,
 * the target issue is checked against the session (reads of other issues only when the
 * workflow allows them, writes never), states against the workflow's list, and sizes against
 * the policy. A backend failure becomes `tool_backend_failed` with a short, masked message,
 * because the text goes straight back into the agent's context. `callTool` never throws.
 */
import type { Issue } from '../domain/issue.js';
import { issueTemplateView } from '../domain/issue.js';
import type { TrackerQueryTool } from '../domain/tracker.js';
import {
  DEFAULT_LIST_LIMIT,
  isToolName,
  QUERY_TOOL_INPUT,
  TOOL_INPUTS,
  type ToolInput,
  type ToolName,
} from './catalog.js';
import type { ToolBackend, ToolPolicy, ToolSession } from './ports.js';

export const TOOL_ERROR_CODES = [
  /** No tool by that name. */
  'tool_unknown',
  /** The arguments do not match the tool's schema (or a question/body is blank). */
  'tool_invalid_arguments',
  /** The call targets an issue the session may not touch. */
  'tool_forbidden',
  /** The issue asked for by identifier does not exist in the project. */
  'tool_not_found',
  /** A transition to a state the workflow does not name. */
  'tool_state_not_configured',
  /** A comment or question longer than the policy's limit. */
  'tool_comment_too_long',
  /** The backend threw; the message is the backend's, shortened and masked. */
  'tool_backend_failed',
] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number];

export type ToolResult = { ok: true; value: unknown } | { ok: false; code: ToolErrorCode; message: string };

/** What a call runs against: the session it is scoped to, the backend and the policy. */
export interface ToolContext {
  session: ToolSession;
  backend: ToolBackend;
  policy: ToolPolicy;
}

/** Longest backend error message passed back to the agent, in characters. */
export const MAX_ERROR_MESSAGE_CHARS = 300;

const fail = (code: ToolErrorCode, message: string): ToolResult => ({ ok: false, code, message });

/** Runs tool `name` with `args` for `ctx.session`. Never throws. */
export async function callTool(name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  const queryTool = ctx.backend.queryTool;
  if (queryTool !== undefined && name === queryTool.name) return trackerQuery(queryTool, args);
  if (!isToolName(name)) return fail('tool_unknown', `no tool named '${name}'`);
  const parsed = TOOL_INPUTS[name].safeParse(args ?? {});
  if (!parsed.success) return fail('tool_invalid_arguments', `${name}: ${schemaProblems(parsed.error)}`);
  try {
    return await dispatch(name, parsed.data, ctx);
  } catch (error) {
    return fail('tool_backend_failed', safeErrorMessage(error));
  }
}

function dispatch(name: ToolName, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  switch (name) {
    case 'tracker_issue':
      return trackerIssue(input as ToolInput<'tracker_issue'>, ctx);
    case 'tracker_comment':
      return trackerComment(input as ToolInput<'tracker_comment'>, ctx);
    case 'tracker_transition':
      return trackerTransition(input as ToolInput<'tracker_transition'>, ctx);
    case 'tracker_search':
      return trackerSearch(input as ToolInput<'tracker_search'>, ctx);
    case 'run_status':
      return runStatus(ctx);
    case 'ask_human':
      return askHuman(input as ToolInput<'ask_human'>, ctx);
    case 'workspace_history':
      return workspaceHistory(input as ToolInput<'workspace_history'>, ctx);
    default:
      return assertNever(name);
  }
}

/** The arguments' problems as one line: `path: message; …`. */
function schemaProblems(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): string {
  return error.issues
    .map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message))
    .join('; ');
}

/** Longest refusal of a query passed back (the query language's own messages can be long). */
const MAX_QUERY_REFUSAL_CHARS = 1000;

/** The tracker's query tool: it scopes the query itself; its refusals keep their reason. */
async function trackerQuery(tool: TrackerQueryTool, args: unknown): Promise<ToolResult> {
  const parsed = QUERY_TOOL_INPUT.safeParse(args ?? {});
  if (!parsed.success) return fail('tool_invalid_arguments', `${tool.name}: ${schemaProblems(parsed.error)}`);
  try {
    const answer = await tool.run(parsed.data.query, parsed.data.variables ?? {});
    if (answer.ok) return { ok: true, value: answer.data };
    if (answer.reason === 'failed') return fail('tool_backend_failed', safeErrorMessage(answer.message));
    const text = maskCredentialShapes(answer.message.replace(/\s*\n\s*/g, '; '));
    const code = answer.reason === 'invalid' ? 'tool_invalid_arguments' : 'tool_forbidden';
    return fail(code, clip(text, MAX_QUERY_REFUSAL_CHARS));
  } catch (error) {
    return fail('tool_backend_failed', safeErrorMessage(error));
  }
}

async function trackerIssue(input: ToolInput<'tracker_issue'>, ctx: ToolContext): Promise<ToolResult> {
  const { session, backend, policy } = ctx;
  const own =
    (input.issue_id === undefined && input.identifier === undefined) ||
    input.issue_id === session.issueId ||
    (input.identifier !== undefined && sameIdentifier(input.identifier, session.identifier));
  if (own) return { ok: true, value: issueTemplateView(await backend.issue(session.issueId)) };
  if (!policy.allowOtherIssues) {
    return fail('tool_forbidden', `this session may read only its own issue ${session.identifier}`);
  }
  if (input.issue_id !== undefined) {
    return { ok: true, value: issueTemplateView(await backend.issue(input.issue_id)) };
  }
  const identifier = input.identifier ?? '';
  const found = await backend.issueByIdentifier(identifier);
  if (found === null) return fail('tool_not_found', `no issue ${identifier} in the project`);
  return { ok: true, value: issueTemplateView(found) };
}

async function trackerComment(input: ToolInput<'tracker_comment'>, ctx: ToolContext): Promise<ToolResult> {
  const refused =
    refuseOtherIssue(input.issue_id, ctx.session) ?? refuseTooLong('body', input.body, ctx.policy);
  if (refused) return refused;
  await ctx.backend.comment(ctx.session.issueId, input.body);
  return {
    ok: true,
    value: { issue_id: ctx.session.issueId, commented: true, chars: charCount(input.body) },
  };
}

async function trackerTransition(
  input: ToolInput<'tracker_transition'>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const refused = refuseOtherIssue(input.issue_id, ctx.session);
  if (refused) return refused;
  const wanted = input.state.trim().toLowerCase();
  const state = ctx.policy.configuredStates.find((s) => s.toLowerCase() === wanted);
  if (state === undefined) {
    const known = ctx.policy.configuredStates.map((s) => `'${s}'`).join(', ') || '(none)';
    return fail(
      'tool_state_not_configured',
      `state '${input.state}' is not configured; configured: ${known}`,
    );
  }
  await ctx.backend.transition(ctx.session.issueId, state);
  return { ok: true, value: { issue_id: ctx.session.issueId, state } };
}

async function trackerSearch(input: ToolInput<'tracker_search'>, ctx: ToolContext): Promise<ToolResult> {
  const limit = input.limit ?? DEFAULT_LIST_LIMIT;
  const issues = await ctx.backend.search(input.query, limit);
  return { ok: true, value: { issues: issues.slice(0, limit).map(issueSummary) } };
}

async function runStatus(ctx: ToolContext): Promise<ToolResult> {
  const s = await ctx.backend.runStatus(ctx.session);
  return {
    ok: true,
    value: {
      issue_identifier: ctx.session.identifier,
      run_id: ctx.session.runId,
      turn: s.turn,
      elapsed_ms: s.elapsedMs,
      tokens: { ...s.tokens },
      cost_usd: s.costUsd,
      budgets: s.budgets.map((b) => ({ name: b.name, used: b.used, limit: b.limit, left: b.left })),
    },
  };
}

async function askHuman(input: ToolInput<'ask_human'>, ctx: ToolContext): Promise<ToolResult> {
  const refused = refuseTooLong('question', input.question, ctx.policy);
  if (refused) return refused;
  await ctx.backend.askHuman(ctx.session, input.question.trim());
  return { ok: true, value: { issue_id: ctx.session.issueId, asked: true, parked: true } };
}

async function workspaceHistory(
  input: ToolInput<'workspace_history'>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const limit = input.limit ?? DEFAULT_LIST_LIMIT;
  const entries = await ctx.backend.history(ctx.session.issueId, limit);
  return {
    ok: true,
    value: {
      issue_id: ctx.session.issueId,
      entries: entries.slice(0, limit).map((e) => ({
        attempt: e.attempt,
        started_at: e.startedAt,
        ended_at: e.endedAt,
        exit_kind: e.exitKind,
        turns: e.turns,
        tokens: e.tokens,
        error: e.error === null ? null : maskCredentialShapes(e.error),
      })),
    },
  };
}

/** Writes stay on the session's own issue, whatever `allowOtherIssues` says. */
function refuseOtherIssue(issueId: string | undefined, session: ToolSession): ToolResult | null {
  if (issueId === undefined || issueId === session.issueId) return null;
  return fail('tool_forbidden', `this session may write only its own issue ${session.identifier}`);
}

function refuseTooLong(field: string, text: string, policy: ToolPolicy): ToolResult | null {
  const chars = charCount(text);
  if (chars <= policy.maxCommentChars) return null;
  return fail(
    'tool_comment_too_long',
    `${field} has ${chars} characters, the limit is ${policy.maxCommentChars}; shorten it and call again`,
  );
}

function issueSummary(issue: Issue): Record<string, unknown> {
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    state: issue.state,
    url: issue.url,
    labels: [...issue.labels],
  };
}

function sameIdentifier(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(token|access_token|api_key|apikey|password|secret|authorization)(["']?\s*[:=]\s*["']?)[^\s"'&,;]+/gi,
  /\b[A-Za-z]{2,8}[_-][A-Za-z0-9_]{20,}\b/g,
  /\/\/[^/\s:@]+:[^/\s@]+@/g,
];

/**
 * Replaces what looks like a credential (by its shape: bearer values, `token=` pairs, prefixed
 * tokens, URL passwords) with `***`. The service's own secrets, known by value, are masked by
 * the agent core's sanitiser; this catches what a tracker's error text may carry besides.
 */
export function maskCredentialShapes(text: string): string {
  return SECRET_PATTERNS.reduce(
    (out, pattern) =>
      out.replace(pattern, (match, p1?: unknown, p2?: unknown) => {
        if (match.startsWith('//')) return '//***@';
        if (typeof p1 === 'string' && typeof p2 === 'string') return `${p1}${p2}***`;
        if (typeof p1 === 'string') return `${p1} ***`;
        return '***';
      }),
    text,
  );
}

/** The first line of an error's message, masked and shortened; never a stack. */
export function safeErrorMessage(error: unknown): string {
  const raw = error instanceof Error ? error.message : typeof error === 'string' ? error : 'unknown error';
  const firstLine = (raw.split('\n')[0] ?? '').trim() || 'unknown error';
  return clip(maskCredentialShapes(firstLine), MAX_ERROR_MESSAGE_CHARS);
}

/** `text` cut to `maxChars`, its last character an ellipsis when cut. */
function clip(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}

function assertNever(value: never): never {
  throw new Error(`unhandled tool: ${String(value)}`);
}
