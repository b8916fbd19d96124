/**
 * The agents' tools through the whole service with a real runtime: the pinned Codex,
 * driven by the fake model server, finds the tool server in its managed config.toml,
 * starts `orchestrator mcp-server`, and calls our tools; the calls land in the file
 * tracker, the store, the log and the metrics (test/support/tool-session.ts).
 *
 * The model is one of Codex's catalogue (the fake provider's `gpt-5.5`), for which Codex
 * offers MCP tools only through its own `tool_search`: the fake model searches first, gets
 * our server back as the namespace `mcp__orchestrator`, and calls its tools with that
 * namespace apart from the tool's name (`asCodexItems` below shapes both items).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CODEX_BIN,
  CODEX_VERSION,
  FAKE_KEY_ENV,
  realCodexSkipReason,
  writeFakeProviderHome,
} from '../agent/codex/real-cli.js';
import {
  lastUserText,
  OPENAI_DEFAULT_USAGE,
  type OpenAIReply,
  openaiDialect,
} from '../support/fake-model/openai.js';
import { type Dialect, FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { useServiceCleanup } from '../support/service.js';
import {
  ASK_HUMAN_QUESTION,
  expectAskHumanCase,
  expectToolCase,
  startToolCase,
  TOOL_CALLS,
  TOOL_ISSUE,
} from '../support/tool-session.js';

const skip = realCodexSkipReason();
if (skip !== null) console.warn(`tools with the real Codex skipped: ${skip}`);

useServiceCleanup();

const root = mkdtempSync(path.join(os.tmpdir(), 'tools-codex-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Our server as Codex offers it to the model. */
const NAMESPACE = 'mcp__orchestrator';
/** Codex's tool that loads deferred tools, answered by Codex itself. */
const TOOL_SEARCH = 'tool_search';
const MODEL_KEY = 'sk-dummy-fake-key';
const MAX_TOKENS = 1_000_000;

type Item = Record<string, unknown>;
const inputOf = (request: RecordedRequest): Item[] => {
  const input = (request.body as { input?: unknown } | null)?.input;
  return Array.isArray(input) ? (input as Item[]) : [];
};

/** True for a call of the working session's turn (the verification session has another prompt). */
const working = (request: RecordedRequest) => lastUserText(request).startsWith(`Work on ${TOOL_ISSUE}:`);

/** The tools Codex's searches handed over, by namespace, from the request's history. */
function searchedTools(request: RecordedRequest): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const item of inputOf(request).filter((i) => i.type === 'tool_search_output')) {
    for (const ns of (item.tools ?? []) as { name?: string; tools?: { name?: string }[] }[]) {
      found[ns.name ?? ''] = [...(found[ns.name ?? ''] ?? []), ...(ns.tools ?? []).map((t) => t.name ?? '')];
    }
  }
  return found;
}

/** The text of every `function_call_output` item a request sends back to the model, oldest first. */
function toolOutputs(request: RecordedRequest): string[] {
  return inputOf(request)
    .filter((item) => item.type === 'function_call_output')
    .map((item) => JSON.stringify(item.output));
}

/** A search of Codex's deferred tools. */
const searchTools = (query: string): OpenAIReply => ({
  type: 'message',
  functionCall: { name: TOOL_SEARCH, arguments: { query, limit: 8 } },
});

/** The queries the model has searched with so far in the request's history. */
const searchedFor = (request: RecordedRequest): string[] =>
  inputOf(request)
    .filter((i) => i.type === 'tool_search_call')
    .map((i) => String((i.arguments as { query?: unknown } | undefined)?.query));

/** A call of our tool `tool`. */
const callOurs = (tool: string, input: Record<string, unknown>): OpenAIReply => ({
  type: 'message',
  functionCall: { name: `${NAMESPACE}__${tool}`, arguments: input },
});

/**
 * The model's way to a tool of ours: a call once Codex's search has handed it over, else a
 * search by its name (Codex ranks by words, and a tool's name is the word that finds it
 * alone), once: a tool the search never finds ends the turn, and the case fails.
 */
function reach(request: RecordedRequest, tool: string, input: Record<string, unknown>): OpenAIReply {
  if ((searchedTools(request)[NAMESPACE] ?? []).includes(tool)) return callOurs(tool, input);
  if (searchedFor(request).includes(tool)) return { type: 'message', text: `${tool} was not found.` };
  return searchTools(tool);
}

/**
 * The dialect with its function calls shaped as Codex reads them: a `tool_search` call as
 * a `tool_search_call` item Codex runs itself (whole, without the streamed argument frames
 * of a function call), and a call of `<namespace>__<tool>` with the namespace in its own field.
 */
function asCodexItems(dialect: Dialect): Dialect {
  const shape = (item: unknown): unknown => {
    const call = item as Item | null;
    if (call?.type !== 'function_call' || typeof call.name !== 'string') return item;
    if (call.name === TOOL_SEARCH) {
      const args = call.arguments === '' ? {} : JSON.parse(call.arguments as string);
      const { id, call_id, status } = call;
      return { type: 'tool_search_call', id, call_id, status, execution: 'client', arguments: args };
    }
    if (!call.name.startsWith(`${NAMESPACE}__`)) return item;
    return { ...call, namespace: NAMESPACE, name: call.name.slice(NAMESPACE.length + 2) };
  };
  return {
    name: dialect.name,
    matches: (method, url) => dialect.matches(method, url),
    respond(request) {
      const response = dialect.respond(request);
      if (response.type !== 'sse') return response;
      const searches = new Set<unknown>();
      const frames = response.frames.flatMap((frame) => {
        const data = { ...(frame.data as Item) };
        const item = data.item as Item | undefined;
        if (item?.name === TOOL_SEARCH) {
          searches.add(item.id);
          if (data.type !== 'response.output_item.done') return [];
        }
        if (searches.has(data.item_id)) return [];
        if (item !== undefined) data.item = shape(item);
        const done = data.response as { output?: unknown[] } | undefined;
        if (done?.output !== undefined) data.response = { ...done, output: done.output.map(shape) };
        return [{ ...frame, data }];
      });
      return { ...response, frames };
    },
  };
}

/**
 * Starts the case: Codex's source home points at the fake model with its key read from
 * OPENAI_API_KEY (a Codex credential variable, which the agent environment keeps), and the
 * approval policy asks about every write, so a write tool of ours must pass unasked.
 */
async function startCodexCase(
  name: string,
  model: FakeModelServer,
  agent: Record<string, unknown>,
  mode: 'app-server' | 'exec' = 'app-server',
) {
  const source = writeFakeProviderHome(path.join(root, name, 'source'), model.port);
  const toml = path.join(source, 'config.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace(`"${FAKE_KEY_ENV}"`, '"OPENAI_API_KEY"'));
  const home = path.join(root, name, 'home');
  mkdirSync(home, { recursive: true });
  const homes = path.join(root, name, 'codex-homes');
  const c = await startToolCase(
    {
      agent: { kind: 'codex', command: `${CODEX_BIN} ${mode}`, stall_timeout_ms: 60_000, ...agent },
      codex: {
        approval_policy: 'on-request',
        sandbox: 'danger-full-access',
        credentials_home: source,
        home_root: homes,
      },
    },
    { HOME: home, OPENAI_API_KEY: MODEL_KEY, RUST_LOG: 'error' },
    () => `model requests: ${model.requests.length}`,
  );
  return { c, homes };
}

describe.skipIf(skip !== null)(`the tool server with the real Codex CLI ${CODEX_VERSION}`, () => {
  itHasThePinnedCli(CODEX_BIN);

  // `exec` is the fallback for a Codex without `app-server`: one process per turn, the same tools.
  it.each(['app-server', 'exec'] as const)(
    'codex (%s) calls tracker_comment (the comment lands in the file tracker), is refused an unconfigured state, and run_status gives its own run’s figures',
    {
      timeout: 180_000,
    },
    async (mode) => {
      const model = await FakeModelServer.start([
        asCodexItems(
          openaiDialect((request) => {
            if (!working(request)) return { type: 'message', text: 'OK' };
            const next = TOOL_CALLS[toolOutputs(request).length];
            return next === undefined
              ? { type: 'message', text: 'Done with the tools.' }
              : reach(request, next.tool, next.input);
          }),
        ),
      ]);
      try {
        const { c, homes } = await startCodexCase(
          `case-${mode}`,
          model,
          { max_turns: 1, max_tokens: MAX_TOKENS, turn_timeout_ms: 120_000 },
          mode,
        );
        const { figures, run } = await expectToolCase(
          c,
          () => model.requests.map(toolOutputs).find((r) => r.length === TOOL_CALLS.length) ?? [],
        );
        // Codex's search handed over each of our tools before the model called it.
        const calls = model.requests.filter(working);
        const last = calls.at(-1) as RecordedRequest;
        expect(searchedTools(last)[NAMESPACE]).toEqual(expect.arrayContaining(TOOL_CALLS.map((t) => t.tool)));
        // The working session's model calls: its searches, the three tools and the answer;
        // the verification session's call is not this run's.
        expect(calls).toHaveLength(searchedFor(last).length + TOOL_CALLS.length + 1);
        expect(run.input_tokens).toBe(calls.length * OPENAI_DEFAULT_USAGE.input);
        expect(run.output_tokens).toBe(calls.length * OPENAI_DEFAULT_USAGE.output);
        // Codex's figure is settled once per turn (the thread's running total, read at the
        // turn's end), so run_status in the middle of the run's only turn sees none of it yet.
        expect(figures.tokens).toEqual({ input: 0, output: 0, total: 0 });
        expect(figures.budgets).toEqual([
          { name: 'max_turns', used: 1, limit: 1, left: 0 },
          { name: 'max_tokens', used: 0, limit: MAX_TOKENS, left: MAX_TOKENS },
        ]);
        // The server reached Codex through its managed config.toml, holding names, not values.
        const [setup] = readdirSync(homes);
        const config = readFileSync(path.join(homes, setup as string, 'config.toml'), 'utf8');
        expect(config).toContain('[mcp_servers.orchestrator]');
        expect(config).toContain('env_vars = ["ORCHESTRATOR_TOOLS_URL", "ORCHESTRATOR_TOOLS_TOKEN"]');
        expect(config).not.toMatch(/ORCHESTRATOR_TOOLS_TOKEN\s*=/);
        expect(config).not.toContain(MODEL_KEY);
      } finally {
        await model.close();
      }
    },
  );

  it('ask_human posts the question once and parks the issue in the blocked state after the turn', {
    timeout: 180_000,
  }, async () => {
    const model = await FakeModelServer.start([
      asCodexItems(
        openaiDialect((request) => {
          if (!working(request)) return { type: 'message', text: 'OK' };
          return toolOutputs(request).length === 0
            ? reach(request, 'ask_human', { question: ASK_HUMAN_QUESTION })
            : { type: 'message', text: 'I asked; waiting for an answer.' };
        }),
      ),
    ]);
    try {
      const { c } = await startCodexCase('ask', model, { max_turns: 3 });
      await expectAskHumanCase(c);
      const answers = toolOutputs(model.requests.filter(working).at(-1) as RecordedRequest);
      expect(answers).toHaveLength(1);
      expect(answers[0]).not.toMatch(/tool_|rejected/);
    } finally {
      await model.close();
    }
  });
});
