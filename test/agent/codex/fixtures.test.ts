/**
 * Every real Codex transcript in the shared fixtures, played back through the
 * adapter and the real skeletons: `exec --json` lines by a fake runtime (one
 * process per turn), app-server recordings by a fake app-server that answers our
 * requests from the recording. Each must end the way its recording ended, with
 * the tool calls, the session id and the usage figure it carried. A fixture
 * added without an expectation here fails the test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { answerServerRequest } from '../../../src/agent/codex/approvals.js';
import { decodeNotification } from '../../../src/agent/codex/protocol.js';
import {
  appServerCommand,
  codexAdapter,
  codexParams,
  codexTestRoot,
  FIXTURES,
  figure,
  fixturesSkipReason,
  runTurns,
  toolsOf,
  verdict,
} from './support.js';

const skip = fixturesSkipReason();
const t = codexTestRoot('codex-fixtures-');
afterAll(() => t.cleanup());
const TIMEOUT = 30_000;

type Tool = readonly [string, string | null, string | null, boolean];
interface ExecCase {
  /** Exit status the recorded process had (or would have). */
  exit: number;
  want: string;
  sessionId: string | null;
  tools: Tool[];
  /** [input (cached included), output, cache read]; null = no figure (unmeasured). */
  usage: [number, number, number] | null;
  finalMessage?: string;
}

const shell = (arg: string, error = false): Tool => ['exec_command', 'shell', arg, error];

const EXEC: Record<string, ExecCase> = {
  'agentcmd_stream-output-1.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019a2d7a-41c4-78b1-b7cc-a45d62a89cd5',
    tools: [],
    usage: [2946, 7, 0],
    finalMessage: '4',
  },
  'agentcmd_stream-output-2.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019a2d7a-6455-7170-a661-c6d8b94c630a',
    tools: [shell('ls')],
    usage: [6040, 129, 4992],
  },
  'agentcmd_stream-output-3.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019a2d7a-8e1c-7111-b1a6-8cec551a55a0',
    tools: [['apply_patch', 'edit', '/private/tmp/codex-research-test/hello.txt', false]],
    usage: [6008, 51, 4096],
  },
  'agentcmd_stream-output-4.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019a2d7b-231d-7290-acc1-6bc6571440da',
    tools: [shell('cat test.js')],
    usage: [6087, 204, 5120],
  },
  'agentcmd_stream-output-5.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019a2d7b-7fb8-78e1-8cfa-5bdbe274a3aa',
    tools: [shell('ls')],
    usage: [6086, 223, 2944],
  },
  // Truncated: the process ended after turn.started. Exit 0 without a terminal event is no success.
  'agentcmd_stream-output-multi-1.jsonl': {
    exit: 0,
    want: 'turn_failed/turn_failed',
    sessionId: '019a2d7b-c0ed-75a0-8908-de832785d47f',
    tools: [],
    usage: null,
  },
  'agent-wrappers_streaming.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019ab7c5-3c6c-7dd3-8e6e-cec2a5a49a62',
    tools: [],
    usage: [7499, 111, 0],
  },
  'agent-wrappers_resume.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019ab7c5-3c6c-7dd3-8e6e-cec2a5a49a62',
    tools: [],
    usage: [7569, 109, 7040],
  },
  'excerpt_tron-doc_codex-0.133.0_echo.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '019e764c-3561-7c23-b6d3-16eba345e8fa',
    tools: [shell('echo hello')],
    usage: [35316, 43, 26880],
    finalMessage: 'hello',
  },
  'untether_codex_0157_web_search.annotated.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '0199f000-0419-7000-8000-00000000c0de',
    tools: [
      ['web_search', null, null, false],
      ['web_search', null, null, false],
    ],
    usage: [40489, 178, 27904],
  },
  'untether_codex_turn_failed_minimal_reasoning.jsonl': {
    exit: 1,
    want: 'turn_failed/turn_failed',
    sessionId: null,
    tools: [],
    usage: null,
  },
  'legacy_vibe-kanban_exec_command.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: null,
    tools: [shell('ls -1')],
    usage: null,
    finalMessage:
      'I can see the directory structure of your project. This appears to be a Rust project with a frontend/backend architecture, using pnpm for package management. The project includes various configuration files, documentation, and development assets.',
  },
  // An excerpt without the turn's start or end: no terminal report.
  'legacy_vibe-kanban_patch_and_mcp.jsonl': {
    exit: 0,
    want: 'turn_failed/turn_failed',
    sessionId: null,
    tools: [
      [
        'apply_patch',
        'edit',
        '/private/var/folders/4m/6cwx14sx59lc2k9km5ph76gh0000gn/T/vibe-kanban-dev/vk-a712-minor-rest/README.md',
        false,
      ],
      ['vibe_kanban.list_projects', null, null, false],
    ],
    usage: null,
  },
  'legacy_vibe-kanban_real_example_missing_key.jsonl': {
    exit: 1,
    want: 'turn_failed/port_exit',
    sessionId: null,
    tools: [],
    usage: null,
  },
  'legacy_vibe-kanban_token_count.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: null,
    tools: [],
    usage: [1674, 384, 1627],
    finalMessage: 'Done!',
  },
  // Two turns in one stream; the last terminal report (a failure) ends the process's turn.
  'synthetic/untether_codex_exec_json_all_formats.jsonl': {
    exit: 1,
    want: 'turn_failed/turn_failed',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    tools: [
      ['exec_command', 'shell', 'pytest -q', false],
      ['exec_command', 'shell', 'pytest -q', true],
      ['apply_patch', 'edit', 'src/compute_answer.py, README.md', false],
      ['apply_patch', 'edit', 'src/compute_answer.py', true],
      ['github.search_issues', null, null, false],
      ['github.search_issues', null, null, true],
      ['web_search', null, null, false],
    ],
    usage: [1840, 732, 256],
  },
  'synthetic/untether_codex_exec_json_phase_and_unknown.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53',
    tools: [['spawn_agent', null, null, false]],
    usage: [10, 5, 0],
    finalMessage: 'Implemented the requested changes.',
  },
  // Recorded from the pinned real CLI against the fake model server.
  '../real-cli/codex/tool.jsonl': {
    exit: 0,
    want: 'turn_completed/none',
    sessionId: '01a22a64-41ef-75a1-8c59-9bb869dc82d3',
    tools: [shell('echo hi > out.txt')],
    usage: [246, 90, 14],
    finalMessage: 'Done: wrote hi to out.txt.',
  },
  '../real-cli/codex/error401.jsonl': {
    exit: 1,
    want: 'turn_failed/credential_unverified',
    sessionId: '01a22a64-8f13-74a2-af51-8ca3a0ced6e1',
    tools: [],
    usage: null,
  },
};
/** Played as several turns of one session instead (see below). */
const MULTI_RUN = 'untether_codex_0157_resume_usage.annotated.jsonl';

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.jsonl'))
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
    .sort();
}

/** Plays a recorded exec stream as one turn through the adapter. */
async function playExec(file: string, lines: string[], exit: number) {
  const fake = fakeRuntime(path.join(t.root, 'fakes', file.replace(/\W/g, '_')), 'codex', {
    steps: [...lines.map((stdout) => ({ stdout })), { exit }],
  });
  const { turns } = await runTurns(codexAdapter(), codexParams(t, `${fake} exec`), ['replay']);
  return turns[0] as NonNullable<(typeof turns)[0]>;
}

describe.skipIf(skip !== null)('codex exec --json fixtures', () => {
  const dir = path.join(FIXTURES, 'codex-exec');

  it('every fixture file has an expectation', () => {
    const here = Object.keys(EXEC).filter((f) => !f.startsWith('../'));
    expect(fixtureFiles(dir)).toEqual([...here, MULTI_RUN].sort());
    const recorded = fixtureFiles(path.join(FIXTURES, 'real-cli/codex')).filter(
      (f) => !f.includes('.requests.'),
    );
    expect(recorded.map((f) => `../real-cli/codex/${f}`)).toEqual(
      Object.keys(EXEC)
        .filter((f) => f.startsWith('../'))
        .sort(),
    );
  });

  for (const [file, want] of Object.entries(EXEC)) {
    it(
      `${file}: ${want.want}`,
      async () => {
        const lines = readFileSync(path.join(dir, file), 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '');
        const run = await playExec(file, lines, want.exit);
        expect(verdict(run)).toBe(want.want);
        expect(toolsOf(run)).toEqual(want.tools);
        expect(run.outcome.result.sessionId).toBe(want.sessionId ?? '');
        const started = run.events.filter((e) => e.type === 'session_started');
        expect(started.length).toBe(want.sessionId === null ? 0 : 1);
        if (want.usage === null) {
          expect(run.outcome.result.usageMeasured).toBe(false);
          expect(run.events.some((e) => e.type === 'token_usage')).toBe(false);
        } else {
          expect(figure(run)).toEqual(want.usage);
          expect(run.outcome.result.usageProvenance).toBe('reported');
        }
        if (want.finalMessage !== undefined) expect(run.outcome.result.finalMessage).toBe(want.finalMessage);
        // Comment lines of the annotated captures are reported, never fatal; nothing else is malformed.
        const malformed = run.events.filter((e) => e.type === 'malformed');
        expect(malformed.length).toBe(lines.filter((l) => l.startsWith('#')).length);
      },
      TIMEOUT,
    );
  }

  it(
    `${MULTI_RUN}: three runs of one thread (fresh, then resumed twice) add up to the thread total, not more`,
    async () => {
      const text = readFileSync(path.join(dir, MULTI_RUN), 'utf8');
      const runs = text
        .split(/^# run \d+$/m)
        .slice(1)
        .map((chunk) => chunk.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')));
      expect(runs).toHaveLength(3);
      const fake = fakeRuntime(path.join(t.root, 'fakes', 'resume'), 'codex', {
        turns: runs.map((lines) => [...lines.map((stdout) => ({ stdout })), { exit: 0 }]),
      });
      const { turns } = await runTurns(codexAdapter(), codexParams(t, `${fake} exec`), [
        'one',
        'two',
        'three',
      ]);
      expect(turns.map(verdict)).toEqual(Array(3).fill('turn_completed/none'));
      expect(turns.map((r) => r.outcome.result.usage.inputTokens)).toEqual([10656, 21328, 32017]);
      expect(turns.map((r) => r.outcome.result.usage.outputTokens)).toEqual([6, 13, 21]);
      expect(turns.every((r) => r.outcome.result.coversSession && !r.outcome.result.spendUnaccounted)).toBe(
        true,
      );
    },
    TIMEOUT,
  );
});

interface AppServerCase {
  file: string;
  want: string;
  sessionId: string;
  tools: Tool[];
  usage: [number, number, number] | null;
  check?: (run: Awaited<ReturnType<typeof runTurns>>['turns'][number]) => void;
}

const APP_SERVER: AppServerCase[] = [
  {
    file: 'real-cli/codex-appserver/tool.jsonl',
    want: 'turn_completed/none',
    sessionId: '01a22a68-286f-7c82-a3ae-5355f9f85b88',
    tools: [shell('echo hi > out.txt')],
    usage: [246, 90, 14],
    check: (run) => {
      expect(run.outcome.result.finalMessage).toBe('Done: wrote hi to out.txt.');
      expect(run.outcome.result.coversSession).toBe(true);
      expect(run.events.filter((e) => e.type === 'token_usage')).toHaveLength(1);
    },
  },
  {
    file: 'real-cli/codex-appserver/error401.jsonl',
    want: 'turn_failed/credential_unverified',
    sessionId: '01a22a68-2e1f-7cd1-8988-9607732d6a46',
    tools: [],
    usage: null,
    check: (run) => {
      // The retried 401 is a notice; the turn is decided by turn/completed.
      const notices = run.events
        .filter((e) => e.type === 'notification')
        .map((e) => (e as { message: string }).message);
      expect(notices[0]).toMatch(/Reconnecting\.\.\. 1\/1 \(the runtime retries\)/);
    },
  },
  {
    file: 'codex-app-server/omnis_gate07_run-2026-09-20b.wire.jsonl',
    want: 'turn_failed/usage_limit',
    sessionId: '01a0bca2-6fc2-7cf0-af30-92cf35266c9e',
    tools: [],
    usage: null,
    check: (run) => {
      expect(run.outcome.error?.resetAtMs).toBe(new Date(2026, 8, 23, 18, 23).getTime());
    },
  },
];

describe.skipIf(skip !== null)('codex app-server fixtures', () => {
  it('every recording has an expectation (transcripts and request logs are views of the same runs)', () => {
    const recorded = [
      ...fixtureFiles(path.join(FIXTURES, 'real-cli/codex-appserver')).map(
        (f) => `real-cli/codex-appserver/${f}`,
      ),
      ...fixtureFiles(path.join(FIXTURES, 'codex-app-server')).map((f) => `codex-app-server/${f}`),
    ].filter((f) => !f.includes('.transcript.') && !f.includes('.requests.'));
    expect(recorded.sort()).toEqual(
      [
        ...APP_SERVER.map((c) => c.file),
        'codex-app-server/excerpt_b2probe_approval_decline_0.134.0.wire.jsonl',
      ].sort(),
    );
  });

  for (const c of APP_SERVER) {
    it(
      `${c.file}: ${c.want}`,
      async () => {
        const command = appServerCommand(t, 'replay', path.join(FIXTURES, c.file));
        const { turns } = await runTurns(codexAdapter(), codexParams(t, command), [
          'Write hi to out.txt using the shell',
        ]);
        const run = turns[0] as NonNullable<(typeof turns)[0]>;
        expect(verdict(run)).toBe(c.want);
        expect(run.outcome.result.sessionId).toBe(c.sessionId);
        expect(run.events.filter((e) => e.type === 'session_started')).toMatchObject([
          { sessionId: c.sessionId },
        ]);
        expect(toolsOf(run)).toEqual(c.tools);
        if (c.usage === null) expect(run.outcome.result.usageMeasured).toBe(false);
        else expect(figure(run)).toEqual(c.usage);
        expect(run.events.filter((e) => e.type === 'malformed')).toEqual([]);
        c.check?.(run);
      },
      TIMEOUT,
    );
  }

  it('the approval excerpt: the request is read as a command approval and declined; the refused command is a failed tool call', () => {
    const lines = readFileSync(
      path.join(FIXTURES, 'codex-app-server/excerpt_b2probe_approval_decline_0.134.0.wire.jsonl'),
      'utf8',
    )
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { id?: number; method?: string; params?: unknown });
    const request = lines.find((m) => m.method === 'item/commandExecution/requestApproval');
    if (request === undefined) throw new Error('no approval request in the excerpt');
    const { answer, notice } = answerServerRequest(request.method as string, request.params);
    expect(answer).toEqual({ result: { decision: 'decline' } });
    expect(notice).toMatch(/rm -rf \/tmp\/probe-dfa-untrusted/);
    const declined = lines
      .filter((m) => m.method === 'item/completed')
      .map((m) => decodeNotification(m.method as string, m.params))
      .find((e) => e.type === 'item' && e.item.type === 'command' && e.item.status === 'declined');
    expect(declined).toMatchObject({ turnId: '019ed3da-ed77-7010-a85b-bbf65d125629' });
  });
});
