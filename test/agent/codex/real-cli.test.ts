/**
 * The pinned real Codex CLI, in both modes, against the fake OpenAI Responses
 * server on 127.0.0.1: a shell tool turn and a resumed second turn with exact
 * usage, a 401 through credential verification, a 503, a cancel after output, the
 * CLI killed mid-turn and a stream the fake holds open. Each case waits on
 * conditions (the fake's requests, the agent's events), never on fixed sleeps;
 * timeouts are generous because a real turn costs about a second and 150 MB on a
 * small shared machine. Skips with a printed reason only when the CLI is not
 * installed and CI is unset.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryProofStore, proofKey, verifyCredential } from '../../../src/agent/core/verify-credential.js';
import { spendMicroUsd } from '../../../src/agent/usage/index.js';
import type { AgentEvent, StartSessionParams } from '../../../src/domain/agent.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { OPENAI_DEFAULT_USAGE, type OpenAIReply, openaiDialect } from '../../support/fake-model/openai.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import {
  CODEX_BIN,
  CODEX_VERSION,
  FAKE_KEY_ENV,
  realCodexEnv,
  realCodexSkipReason,
  writeFakeProviderHome,
} from './real-cli.js';
import {
  codexAdapter,
  codexTestRoot,
  expectShellCaseTurns,
  runTurns,
  SAMPLE_ISSUE,
  SHELL_CASE_PROMPTS,
  shellCaseScript,
} from './support.js';

const skip = realCodexSkipReason();
if (skip !== null) console.warn(`codex real-CLI tests skipped: ${skip}`);

const t = codexTestRoot('codex-real-');
afterAll(() => t.cleanup());
const TURN_TIMEOUT = 120_000;
const PROMPT = SHELL_CASE_PROMPTS[0];

let scripts: ((request: RecordedRequest, index: number) => OpenAIReply)[] = [];
let server: FakeModelServer;
/** The requests of the current case (the server is shared by the file). */
let mark = 0;
const caseRequests = () => server.requests.slice(mark);

beforeAll(async () => {
  if (skip !== null) return;
  // One server for the file; each case installs its own script, indexed from its first request.
  server = await FakeModelServer.start([
    openaiDialect((request) => {
      const script = scripts[0];
      if (script === undefined) return { type: 'error', status: 500, message: 'no script installed' };
      return script(request, request.seq - 1 - mark);
    }),
  ]);
});
afterAll(async () => {
  await server?.close();
});

function useScript(script: (request: RecordedRequest, index: number) => OpenAIReply): void {
  scripts = [script];
  mark = server.requests.length;
}

function params(mode: 'app-server' | 'exec', o: { stallTimeoutMs?: number } = {}): StartSessionParams {
  const source = writeFakeProviderHome(path.join(t.root, `source-${mode}`), server.port);
  return {
    workspacePath: t.workspace(),
    workspaceRoot: t.root,
    agent: {
      kind: 'codex',
      command: `${CODEX_BIN} ${mode}`,
      turnTimeoutMs: 90_000,
      readTimeoutMs: 60_000,
      stallTimeoutMs: o.stallTimeoutMs ?? 0,
    },
    options: { sandbox: 'danger-full-access', credentials_home: source },
    resumeSessionId: null,
    env: realCodexEnv(t.home()),
  };
}

const RATES = { inputPerMtok: 1.25, outputPerMtok: 10, cacheReadPerMtok: 0.125, cacheWritePerMtok: 0 };

/** Runs one turn, doing `during` once `ready` holds for the events so far. */
async function turnWith(
  mode: 'app-server' | 'exec',
  ready: (events: AgentEvent[]) => boolean,
  during: (events: AgentEvent[], abort: AbortController) => void,
  o: { stallTimeoutMs?: number } = {},
) {
  const adapter = codexAdapter();
  const session = await adapter.startSession(params(mode, o));
  const events: AgentEvent[] = [];
  const abort = new AbortController();
  let acted = false;
  const check = setInterval(() => {
    if (!acted && ready(events)) {
      acted = true;
      during(events, abort);
    }
  }, 20);
  try {
    const outcome = await adapter.runTurn(session, {
      prompt: PROMPT,
      issue: SAMPLE_ISSUE,
      onEvent: (e) => events.push(e),
      signal: abort.signal,
    });
    return { outcome, events, acted };
  } finally {
    clearInterval(check);
    await adapter.stopSession(session);
  }
}

/** The fake has served a held response (its first text delta is out). */
const heldServed = () => caseRequests().length >= 1;

describe.skipIf(skip !== null)(`codex ${CODEX_VERSION} (real CLI) against the fake model server`, () => {
  for (const mode of ['app-server', 'exec'] as const) {
    describe(mode, () => {
      it(
        'runs a shell tool turn with exact usage and cost, then resumes the same session for a second turn that adds to the first',
        async () => {
          useScript(shellCaseScript());
          const p = params(mode);
          const { turns } = await runTurns(codexAdapter(), p, SHELL_CASE_PROMPTS);
          const [first] = expectShellCaseTurns(turns, {
            workspace: p.workspacePath,
            requests: caseRequests(),
            key: 'sk-dummy-fake-key',
          });
          // Codex reports no cost: it is priced from token_rates, and unpriced without them.
          expect(spendMicroUsd(first.outcome.result.reportedAmounts, first.outcome.result.usage, RATES)).toBe(
            232 * 1.25 + 90 * 10 + 2,
          );
          expect(spendMicroUsd([], first.outcome.result.usage, null)).toBeNull();
        },
        TURN_TIMEOUT,
      );

      it(
        'a 401 from the provider fails credential verification as credential_unverified, in one attempt',
        async () => {
          useScript(() => ({
            type: 'error',
            status: 401,
            message: 'Incorrect API key provided: dummy.',
            code: 'invalid_api_key',
          }));
          const start = params(mode);
          const result = await verifyCredential({
            adapter: codexAdapter(),
            start,
            key: proofKey('codex', start.agent.command, start.options, [start.env[FAKE_KEY_ENV] ?? '']),
            store: new MemoryProofStore(),
            issue: SAMPLE_ISSUE,
            timeoutMs: 90_000,
          });
          expect(result.ok).toBe(false);
          if (!result.ok) {
            expect(result.error.kind).toBe('credential_unverified');
            expect(result.attempts).toBe(1);
            expect(isRetryable(result.error.kind)).toBe(false);
          }
        },
        TURN_TIMEOUT,
      );

      it(
        'a 503 from the provider fails the turn with a retryable kind',
        async () => {
          useScript(() => ({
            type: 'error',
            status: 503,
            message: 'The server is overloaded.',
            code: 'server_is_overloaded',
          }));
          const { turns } = await runTurns(codexAdapter(), params(mode), [PROMPT]);
          const [run] = turns as [(typeof turns)[0]];
          expect(run.outcome.result.exitReason).toBe('turn_failed');
          expect(run.outcome.error?.kind).toBe('response_error');
          expect(isRetryable(run.outcome.error?.kind)).toBe(true);
        },
        TURN_TIMEOUT,
      );

      it(
        'a cancel after the model served output ends the turn as turn_cancelled with its spend unaccounted',
        async () => {
          useScript(() => ({ type: 'message', text: 'Hello from the fake', holdAt: 'first_delta' }));
          const { outcome, acted } = await turnWith(
            mode,
            () => heldServed(),
            (_events, abort) => setTimeout(() => abort.abort(), 300),
          );
          expect(acted).toBe(true);
          expect(outcome.result.exitReason).toBe('turn_cancelled');
          expect(outcome.error?.kind).toBe('turn_cancelled');
          expect(outcome.result.spendUnaccounted).toBe(true);
        },
        TURN_TIMEOUT,
      );

      it(
        'the CLI killed mid-turn is port_exit with its spend unaccounted',
        async () => {
          useScript(() => ({ type: 'message', text: 'Hello from the fake', holdAt: 'first_delta' }));
          const { outcome, acted } = await turnWith(
            mode,
            (events) => heldServed() && events.some((e) => e.agentPid !== ''),
            (events) => {
              const pid = Number(events.find((e) => e.agentPid !== '')?.agentPid);
              setTimeout(() => process.kill(-pid, 'SIGKILL'), 300);
            },
          );
          expect(acted).toBe(true);
          expect(outcome.result.exitReason).toBe('turn_failed');
          expect(outcome.error?.kind).toBe('port_exit');
          expect(outcome.result.spendUnaccounted).toBe(true);
        },
        TURN_TIMEOUT,
      );

      it(
        'a stream the fake holds open is ended by our stall timeout',
        async () => {
          useScript(() => ({ type: 'message', text: 'Hello from the fake', holdAt: 'first_delta' }));
          const started = Date.now();
          const { outcome } = await turnWith(
            mode,
            () => false,
            () => undefined,
            // Long enough that a CLI starting slowly on a loaded machine reaches the held stream
            // first: a stall before the request left would rightly be counted as no spend.
            { stallTimeoutMs: 10_000 },
          );
          expect(outcome.result.exitReason).toBe('turn_failed');
          expect(outcome.error?.kind).toBe('response_timeout');
          expect(outcome.error?.detail).toMatch(/stalled/);
          expect(outcome.result.spendUnaccounted).toBe(true);
          expect(Date.now() - started).toBeLessThan(60_000);
        },
        TURN_TIMEOUT,
      );
    });
  }

  it('nothing left the machine: every request the fake saw came from the CLI to 127.0.0.1', () => {
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((r) => r.dialect === 'openai')).toBe(true);
    expect(existsSync(CODEX_BIN)).toBe(true);
    expect(OPENAI_DEFAULT_USAGE.input).toBe(123);
  });
});
