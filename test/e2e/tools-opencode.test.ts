/**
 * The agents' tools through the whole service with the real OpenCode: the pinned CLI, driven by
 * the fake model server as an OpenAI-compatible provider, finds the tool server in its inline
 * config, starts `orchestrator mcp-server` and calls our tools; the calls land in the file
 * tracker, the store, the log and the metrics (test/support/tool-session.ts). The block denies
 * every other tool (`"*": deny`), so the calls also prove our tools are allowed after its rules.
 */
import { describe, expect, it } from 'vitest';
import { OPENCODE_BIN } from '../agent/opencode/real-cli.js';
import { realCliBlock, realCliEnv } from '../agent/opencode/support.js';
import { type ChatReply, type ChatUsage, chatDialect, chatOfferedTools } from '../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { pinnedCliPlan } from '../support/headless-cli.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { useServiceCleanup } from '../support/service.js';
import { expectToolCase, startToolCase, TOOL_CALLS } from '../support/tool-session.js';

const plan = pinnedCliPlan('opencode', 'opencode');
if (!plan.run) console.warn(`tools with the real OpenCode skipped: ${plan.reason}`);

useServiceCleanup();

/** How OpenCode names a tool of our server: the server's name, an underscore, the tool's. */
const OURS = 'orchestrator_';
const MAX_TOKENS = 1_000_000;

/** Each of the turn's four model calls has figures of its own, so every sum names its calls. */
const USAGE: readonly ChatUsage[] = [
  { prompt: 1_000, completion: 10, cachedPrompt: 100 },
  { prompt: 1_100, completion: 20, cachedPrompt: 200 },
  { prompt: 1_200, completion: 30, cachedPrompt: 300 },
  { prompt: 1_300, completion: 40, cachedPrompt: 400 },
];

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

/** The tool results a request carries back, oldest first, as text. */
function toolResults(request: RecordedRequest): string[] {
  const messages = (request.body as { messages?: ChatMessage[] } | null)?.messages ?? [];
  return messages
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

/** The model: the case's calls in a row, then done; a request offering none of our tools (the credential check) gets text. */
function script(request: RecordedRequest): ChatReply {
  if (!chatOfferedTools(request).some((t) => t.startsWith(OURS))) {
    return { type: 'message', text: 'ready', usage: { prompt: 20, completion: 1, cachedPrompt: 0 } };
  }
  const done = toolResults(request).length;
  const usage = USAGE[done] as ChatUsage;
  const next = TOOL_CALLS[done];
  return next === undefined
    ? { type: 'message', text: 'Done with the tools.', usage }
    : { type: 'message', toolCalls: [{ name: `${OURS}${next.tool}`, arguments: next.input }], usage };
}

const sum = (calls: readonly ChatUsage[], key: 'prompt' | 'completion') =>
  calls.reduce((total, u) => total + u[key], 0);

describe.skipIf(!plan.run)('the tool server with the real OpenCode', () => {
  itHasThePinnedCli(OPENCODE_BIN);

  it('opencode calls tracker_comment (the comment lands in the file tracker), is refused an unconfigured state, and run_status gives its own run’s figures', {
    timeout: 240_000,
  }, async () => {
    const model = await FakeModelServer.start([chatDialect(script)]);
    try {
      const c = await startToolCase(
        {
          agent: {
            kind: 'opencode',
            command: OPENCODE_BIN,
            max_turns: 1,
            max_tokens: MAX_TOKENS,
            stall_timeout_ms: 60_000,
            turn_timeout_ms: 180_000,
          },
          opencode: realCliBlock(model.url, { permission: { '*': 'deny' } }),
        },
        realCliEnv(),
        () =>
          `model requests: ${model.requests.length}\n${model.requests
            .map((r) => `${r.seq}: tools ${chatOfferedTools(r).join(',')}; results ${toolResults(r).length}`)
            .join('\n')}`,
      );
      const working = () => model.requests.filter((r) => chatOfferedTools(r).some((t) => t.startsWith(OURS)));
      const { figures, run } = await expectToolCase(
        c,
        () =>
          working()
            .map(toolResults)
            .find((r) => r.length === TOOL_CALLS.length) ?? [],
      );

      // The turn's four calls offered our tools and, under the block's "*": deny, none of OpenCode's own.
      expect(working(), c.explain()).toHaveLength(4);
      for (const request of working()) {
        expect(chatOfferedTools(request).filter((t) => !t.startsWith(OURS))).toEqual([]);
        expect(chatOfferedTools(request)).toEqual(
          expect.arrayContaining(TOOL_CALLS.map((t) => OURS + t.tool)),
        );
      }
      // The run counts the turn's four calls only (not the credential check's), prompt tokens
      // with their cached part, as the fake served them.
      expect(run).toMatchObject({
        input_tokens: sum(USAGE, 'prompt'),
        output_tokens: sum(USAGE, 'completion'),
        total_tokens: sum(USAGE, 'prompt') + sum(USAGE, 'completion'),
      });
      // OpenCode reports a call's figures when its step finishes, and a step finishes after the
      // tools it asked for have run: run_status ran inside the third step, so what was reported
      // by then is the first two steps, to the token.
      const reported = USAGE.slice(0, 2);
      const input = sum(reported, 'prompt');
      const output = sum(reported, 'completion');
      expect(figures.tokens).toEqual({ input, output, total: input + output });
      // The fake's model has no price, and OpenCode's cost of 0 is not taken as free.
      expect(figures.cost_usd).toBeNull();
      expect(figures.budgets).toEqual([
        { name: 'max_turns', used: 1, limit: 1, left: 0 },
        { name: 'max_tokens', used: input + output, limit: MAX_TOKENS, left: MAX_TOKENS - (input + output) },
      ]);
    } finally {
      await model.close();
    }
  });
});
