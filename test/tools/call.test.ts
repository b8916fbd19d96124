import { describe, expect, it } from 'vitest';
import { issueTemplateView } from '../../src/domain/issue.js';
import { callTool, maskCredentialShapes, safeErrorMessage, type ToolContext } from '../../src/tools/call.js';
import type { ToolBackend } from '../../src/tools/ports.js';
import { fakeBackend, HISTORY, makeIssue, POLICY, SESSION_A, SESSION_B } from './fake-backend.js';

function ctx(over: Partial<ToolContext> = {}): ToolContext & { backend: ReturnType<typeof fakeBackend> } {
  const backend = fakeBackend();
  return { session: SESSION_A, backend, policy: POLICY, ...over } as ToolContext & {
    backend: ReturnType<typeof fakeBackend>;
  };
}

describe('callTool happy paths', () => {
  it('tracker_issue with no arguments returns the session issue in the template view', async () => {
    const c = ctx();
    expect(await callTool('tracker_issue', {}, c)).toEqual({
      ok: true,
      value: issueTemplateView(makeIssue('id-a', 'PRJ-1')),
    });
  });

  it('tracker_issue treats undefined arguments as none', async () => {
    const r = await callTool('tracker_issue', undefined, ctx());
    expect(r.ok && (r.value as { identifier: string }).identifier).toBe('PRJ-1');
  });

  it("tracker_issue by the session's own identifier, in any casing, needs no allowOtherIssues", async () => {
    const r = await callTool('tracker_issue', { identifier: 'prj-1' }, ctx());
    expect(r).toEqual({ ok: true, value: issueTemplateView(makeIssue('id-a', 'PRJ-1')) });
  });

  it('tracker_comment posts the body on the session issue', async () => {
    const c = ctx();
    expect(await callTool('tracker_comment', { body: 'done: fixed it' }, c)).toEqual({
      ok: true,
      value: { issue_id: 'id-a', commented: true, chars: 14 },
    });
    expect(c.backend.writes).toEqual([{ op: 'comment', issueId: 'id-a', body: 'done: fixed it' }]);
  });

  it('tracker_comment accepts its own issue_id explicitly', async () => {
    const c = ctx();
    const r = await callTool('tracker_comment', { body: 'x', issue_id: 'id-a' }, c);
    expect(r.ok).toBe(true);
    expect(c.backend.writes).toEqual([{ op: 'comment', issueId: 'id-a', body: 'x' }]);
  });

  it('tracker_transition matches the state case-insensitively and sends the configured casing', async () => {
    const c = ctx();
    expect(await callTool('tracker_transition', { state: 'human review' }, c)).toEqual({
      ok: true,
      value: { issue_id: 'id-a', state: 'Human Review' },
    });
    expect(c.backend.writes).toEqual([{ op: 'transition', issueId: 'id-a', state: 'Human Review' }]);
  });

  it('tracker_search returns summaries and defaults the limit to 10', async () => {
    const c = ctx();
    expect(await callTool('tracker_search', { query: 'Title of PRJ-2' }, c)).toEqual({
      ok: true,
      value: {
        issues: [
          {
            id: 'id-b',
            identifier: 'PRJ-2',
            title: 'Title of PRJ-2',
            state: 'In Progress',
            url: 'https://tracker.example/PRJ-2',
            labels: [],
          },
        ],
      },
    });
    expect(c.backend.searches).toEqual([{ query: 'Title of PRJ-2', limit: 10 }]);
  });

  it('tracker_search passes an explicit limit through', async () => {
    const c = ctx();
    const r = await callTool('tracker_search', { query: 'Title', limit: 1 }, c);
    expect(r.ok && (r.value as { issues: unknown[] }).issues).toHaveLength(1);
    expect(c.backend.searches).toEqual([{ query: 'Title', limit: 1 }]);
  });

  it('run_status reports the backend figures in snake_case with the session run', async () => {
    expect(await callTool('run_status', {}, ctx())).toEqual({
      ok: true,
      value: {
        issue_identifier: 'PRJ-1',
        run_id: 7,
        turn: 3,
        elapsed_ms: 65_000,
        tokens: { input: 1_200, output: 300, total: 1_500 },
        cost_usd: null,
        budgets: [{ name: 'tokens', used: 1_500, limit: 10_000, left: 8_500 }],
      },
    });
  });

  it('ask_human hands the trimmed question and the session to the backend', async () => {
    const c = ctx();
    expect(await callTool('ask_human', { question: '  Which API?  ' }, c)).toEqual({
      ok: true,
      value: { issue_id: 'id-a', asked: true, parked: true },
    });
    expect(c.backend.writes).toEqual([{ op: 'askHuman', issueId: 'id-a', question: 'Which API?' }]);
  });

  it('workspace_history lists earlier runs of the session issue only', async () => {
    const c = ctx();
    const r = await callTool('workspace_history', { limit: 1 }, c);
    expect(r).toEqual({
      ok: true,
      value: {
        issue_id: 'id-a',
        entries: [
          {
            attempt: 2,
            started_at: '2026-01-03T00:00:00Z',
            ended_at: '2026-01-03T00:10:00Z',
            exit_kind: 'failed',
            turns: 4,
            tokens: 900,
            error: 'turn_timeout: no output for 300s',
          },
        ],
      },
    });
    expect(c.backend.historyAsks).toEqual([{ issueId: 'id-a', limit: 1 }]);
    expect(HISTORY).toHaveLength(2);
  });
});

describe('callTool scoping', () => {
  it('reading another issue by id is forbidden without allowOtherIssues', async () => {
    expect(await callTool('tracker_issue', { issue_id: 'id-b' }, ctx())).toEqual({
      ok: false,
      code: 'tool_forbidden',
      message: 'this session may read only its own issue PRJ-1',
    });
  });

  it('reading another issue by identifier is forbidden without allowOtherIssues', async () => {
    const r = await callTool('tracker_issue', { identifier: 'PRJ-2' }, ctx());
    expect(r.ok ? 'ok' : r.code).toBe('tool_forbidden');
  });

  it('reading another issue is allowed with allowOtherIssues, by id and by identifier', async () => {
    const c = ctx({ policy: { ...POLICY, allowOtherIssues: true } });
    const expected = issueTemplateView(makeIssue('id-b', 'PRJ-2', { state: 'In Progress', labels: [] }));
    expect(await callTool('tracker_issue', { issue_id: 'id-b' }, c)).toEqual({ ok: true, value: expected });
    expect(await callTool('tracker_issue', { identifier: 'PRJ-2' }, c)).toEqual({
      ok: true,
      value: expected,
    });
  });

  it('an unknown identifier is tool_not_found, not a backend failure', async () => {
    const c = ctx({ policy: { ...POLICY, allowOtherIssues: true } });
    expect(await callTool('tracker_issue', { identifier: 'PRJ-99' }, c)).toEqual({
      ok: false,
      code: 'tool_not_found',
      message: 'no issue PRJ-99 in the project',
    });
  });

  it("session A's calls cannot write session B's issue, even with allowOtherIssues", async () => {
    for (const allowOtherIssues of [false, true]) {
      const c = ctx({ policy: { ...POLICY, allowOtherIssues } });
      const comment = await callTool('tracker_comment', { body: 'hi', issue_id: SESSION_B.issueId }, c);
      const move = await callTool('tracker_transition', { state: 'Done', issue_id: SESSION_B.issueId }, c);
      expect(comment).toEqual({
        ok: false,
        code: 'tool_forbidden',
        message: 'this session may write only its own issue PRJ-1',
      });
      expect(move.ok ? 'ok' : move.code).toBe('tool_forbidden');
      expect(c.backend.writes).toEqual([]);
    }
  });

  it("session B's context writes B's issue, not A's", async () => {
    const c = ctx({ session: SESSION_B });
    await callTool('tracker_comment', { body: 'from B' }, c);
    expect(c.backend.writes).toEqual([{ op: 'comment', issueId: 'id-b', body: 'from B' }]);
  });
});

describe('callTool refusals', () => {
  it('a transition to an unconfigured state is refused with the configured list', async () => {
    const c = ctx();
    expect(await callTool('tracker_transition', { state: 'Shipped' }, c)).toEqual({
      ok: false,
      code: 'tool_state_not_configured',
      message: "state 'Shipped' is not configured; configured: 'Todo', 'In Progress', 'Human Review', 'Done'",
    });
    expect(c.backend.writes).toEqual([]);
  });

  it('a comment over maxCommentChars is refused whole, never cut', async () => {
    const c = ctx();
    expect(await callTool('tracker_comment', { body: 'x'.repeat(21) }, c)).toEqual({
      ok: false,
      code: 'tool_comment_too_long',
      message: 'body has 21 characters, the limit is 20; shorten it and call again',
    });
    expect(c.backend.writes).toEqual([]);
  });

  it('a comment of exactly maxCommentChars code points is accepted (emoji count once)', async () => {
    const c = ctx();
    const r = await callTool('tracker_comment', { body: '😀'.repeat(20) }, c);
    expect(r).toEqual({ ok: true, value: { issue_id: 'id-a', commented: true, chars: 20 } });
  });

  it('an over-long question is refused too', async () => {
    const r = await callTool('ask_human', { question: 'q'.repeat(21) }, ctx());
    expect(r.ok ? 'ok' : r.code).toBe('tool_comment_too_long');
  });

  it('a blank question is invalid', async () => {
    const c = ctx();
    expect(await callTool('ask_human', { question: '   ' }, c)).toEqual({
      ok: false,
      code: 'tool_invalid_arguments',
      message: 'ask_human: question: must not be blank',
    });
    expect(c.backend.writes).toEqual([]);
  });

  it.each([
    ['tracker_comment', {}],
    ['tracker_comment', { body: 42 }],
    ['tracker_comment', { body: 'x', isue_id: 'id-a' }],
    ['tracker_transition', { state: '' }],
    ['tracker_search', { query: 'a', limit: 51 }],
    ['tracker_search', { query: 'a', limit: 1.5 }],
    ['workspace_history', { limit: 0 }],
    ['tracker_issue', { issue_id: 'id-a', identifier: 'PRJ-1' }],
    ['run_status', { verbose: true }],
    ['run_status', 'not an object'],
  ])('%s with %j is tool_invalid_arguments', async (name, args) => {
    const r = await callTool(name, args, ctx());
    expect(r.ok ? 'ok' : r.code).toBe('tool_invalid_arguments');
    expect(r.ok ? '' : r.message.startsWith(`${name}: `)).toBe(true);
  });

  it('an unknown tool is tool_unknown, including inherited object keys', async () => {
    expect(await callTool('shell_exec', {}, ctx())).toEqual({
      ok: false,
      code: 'tool_unknown',
      message: "no tool named 'shell_exec'",
    });
    const r = await callTool('toString', {}, ctx());
    expect(r.ok ? 'ok' : r.code).toBe('tool_unknown');
  });
});

describe('callTool backend failures', () => {
  function throwing(error: unknown): ToolBackend {
    const fail = async (): Promise<never> => {
      throw error;
    };
    return {
      issue: fail,
      issueByIdentifier: fail,
      comment: fail,
      transition: fail,
      search: fail,
      runStatus: fail,
      history: fail,
      askHuman: fail,
    };
  }

  it('a backend that throws becomes tool_backend_failed with the first line of its message', async () => {
    const c = ctx({
      backend: throwing(new Error('tracker: tracker_api_error: HTTP 502\n    at fetch (x.js:1)')),
    });
    for (const [name, args] of [
      ['tracker_issue', {}],
      ['tracker_comment', { body: 'x' }],
      ['tracker_transition', { state: 'Done' }],
      ['tracker_search', { query: 'x' }],
      ['run_status', {}],
      ['ask_human', { question: 'x?' }],
      ['workspace_history', {}],
    ] as const) {
      expect(await callTool(name, args, c)).toEqual({
        ok: false,
        code: 'tool_backend_failed',
        message: 'tracker: tracker_api_error: HTTP 502',
      });
    }
  });

  it('a token in the backend error never reaches the agent', async () => {
    const c = ctx({
      backend: throwing(
        new Error('request failed: Authorization: Bearer abcdef0123456789xyz token=s3cr3tvalue'),
      ),
    });
    const r = await callTool('tracker_issue', {}, c);
    expect(r).toEqual({
      ok: false,
      code: 'tool_backend_failed',
      message: 'request failed: Authorization: *** *** token=***',
    });
    expect(JSON.stringify(r)).not.toMatch(/abcdef0123456789xyz|s3cr3tvalue/);
  });

  it('a thrown non-Error is still a value, not an exception', async () => {
    const r = await callTool('run_status', {}, ctx({ backend: throwing(undefined) }));
    expect(r).toEqual({ ok: false, code: 'tool_backend_failed', message: 'unknown error' });
  });
});

describe('secret masking', () => {
  it.each([
    ['ghp_0123456789abcdefghijklmnopqrstuv leaked', '*** leaked'],
    ['https://user:pa55word@host/x', 'https://***@host/x'],
    ['api_key: "abcdef"', 'api_key: "***"'],
    ['plain tracker_payload_error message', 'plain tracker_payload_error message'],
  ])('%j → %j', (input, expected) => {
    expect(maskCredentialShapes(input)).toBe(expected);
  });

  it('a long message is cut to 300 characters with an ellipsis', () => {
    const m = safeErrorMessage(new Error('a '.repeat(400)));
    expect(m).toHaveLength(300);
    expect(m.endsWith('…')).toBe(true);
  });
});
