/**
 * The agents' tools through the whole service with the pinned Gemini CLI: the service writes
 * the tool server into the `mcpServers` of the session's managed settings, the CLI expands the
 * token reference from its environment, starts `orchestrator mcp-server` and calls our tools
 * as the fake model asks; the calls land in the file tracker, the store, the log and the
 * metrics (test/support/tool-session.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GEMINI_BIN, GEMINI_MODEL } from '../agent/gemini/real-cli.js';
import { realCliEnv } from '../agent/gemini/support.js';
import { BUILT_MAIN } from '../support/cli.js';
import {
  GEMINI_DEFAULT_USAGE,
  type GeminiReply,
  geminiDialect,
  geminiOfferedTools,
} from '../support/fake-model/gemini.js';
import { FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { pinnedCliPlan } from '../support/headless-cli.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { useServiceCleanup } from '../support/service.js';
import { expectToolCase, startToolCase, TOOL_CALLS } from '../support/tool-session.js';

const plan = pinnedCliPlan('gemini', 'gemini');
if (!plan.run) console.warn(`tools with the real Gemini CLI skipped: ${plan.reason}`);

useServiceCleanup();

/** How Gemini CLI names a tool of our server in its function declarations. */
const OURS = 'mcp_orchestrator_';
const MAX_TOKENS = 1_000_000;

/** The function results a request carries back, oldest first, as text. */
function toolResults(request: RecordedRequest): string[] {
  const contents = (request.body as { contents?: { parts?: unknown }[] } | null)?.contents ?? [];
  return contents.flatMap((c) =>
    Array.isArray(c.parts)
      ? c.parts
          .map((p) => (p as { functionResponse?: { response?: unknown } }).functionResponse)
          .filter((r) => r !== undefined)
          .map((r) => JSON.stringify(r.response))
      : [],
  );
}

/** The model: the case's calls in a row, then done; a request without our tools (the credential check) gets text. */
function script(request: RecordedRequest): GeminiReply {
  if (!geminiOfferedTools(request).some((t) => t.startsWith(OURS))) return { type: 'message', text: 'OK' };
  const next = TOOL_CALLS[toolResults(request).length];
  return next === undefined
    ? { type: 'message', text: 'Done with the tools.' }
    : { type: 'message', functionCalls: [{ name: `${OURS}${next.tool}`, args: next.input }] };
}

/** The managed settings files under the environment's state folder, by text. */
function managedSettingsTexts(env: Record<string, string>): string[] {
  const root = path.join(env.XDG_STATE_HOME as string, 'orchestrator', 'gemini-homes');
  return readdirSync(root).map((setup) =>
    readFileSync(path.join(root, setup, '.gemini', 'settings.json'), 'utf8'),
  );
}

describe.skipIf(!plan.run)('the tool server with the real Gemini CLI', () => {
  itHasThePinnedCli(GEMINI_BIN);

  // yolo is the kind's default; under auto_edit the CLI would leave out of its declarations,
  // in a headless run, any tool that asks first: ours are offered only because they are trusted.
  it.each(['yolo', 'auto_edit'])(
    'gemini (%s) calls tracker_comment (the comment lands in the file tracker), is refused an unconfigured state, and run_status gives its own run’s figures',
    {
      timeout: 180_000,
    },
    async (approvalMode) => {
      const model = await FakeModelServer.start([geminiDialect(script)]);
      try {
        const env = realCliEnv(model.url);
        const c = await startToolCase(
          {
            agent: {
              kind: 'gemini',
              max_turns: 1,
              max_tokens: MAX_TOKENS,
              stall_timeout_ms: 60_000,
              turn_timeout_ms: 120_000,
            },
            gemini: { model: GEMINI_MODEL, max_attempts: 2, approval_mode: approvalMode },
          },
          env,
          () =>
            `model requests: ${model.requests.map((r) => `${r.path} ${geminiOfferedTools(r).length}`).join('\n')}`,
        );
        const { figures, run } = await expectToolCase(
          c,
          () => model.requests.map(toolResults).find((r) => r.length === TOOL_CALLS.length) ?? [],
        );
        // Our three tools were declared to the model under the CLI's own names.
        const working = model.requests.filter((r) => geminiOfferedTools(r).some((t) => t.startsWith(OURS)));
        expect(geminiOfferedTools(working[0] as RecordedRequest)).toEqual(
          expect.arrayContaining(TOOL_CALLS.map((t) => `${OURS}${t.tool}`)),
        );
        // The turn's four model calls (three asking for a tool, one closing), each the fake's figures.
        expect(working).toHaveLength(4);
        expect(run).toMatchObject({
          input_tokens: 4 * GEMINI_DEFAULT_USAGE.prompt,
          output_tokens: 4 * GEMINI_DEFAULT_USAGE.candidates,
          total_tokens: 4 * (GEMINI_DEFAULT_USAGE.prompt + GEMINI_DEFAULT_USAGE.candidates),
        });
        // Gemini CLI reports usage only on its closing `result` line, so mid-turn, when
        // run_status ran, the run had no figures yet: zero, not an estimate.
        expect(figures.tokens).toEqual({ input: 0, output: 0, total: 0 });
        expect(figures.cost_usd).toBeNull();
        expect(figures.budgets).toEqual([
          { name: 'max_turns', used: 1, limit: 1, left: 0 },
          { name: 'max_tokens', used: 0, limit: MAX_TOKENS, left: MAX_TOKENS },
        ]);
        // Two setups (the credential check without servers, the session with them), and the
        // CLI wrote back no expanded value: the tool session's file still holds references only.
        const texts = managedSettingsTexts(env);
        expect(texts).toHaveLength(2);
        const servers = texts.map((t) => JSON.parse(t).mcpServers).filter((s) => s !== undefined);
        expect(servers).toEqual([
          {
            orchestrator: {
              command: process.execPath,
              args: [BUILT_MAIN, 'mcp-server'],
              env: {
                ORCHESTRATOR_TOOLS_URL: '${ORCHESTRATOR_TOOLS_URL}',
                ORCHESTRATOR_TOOLS_TOKEN: '${ORCHESTRATOR_TOOLS_TOKEN}',
              },
              trust: true,
            },
          },
        ]);
      } finally {
        await model.close();
      }
    },
  );
});
