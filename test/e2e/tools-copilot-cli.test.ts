/**
 * The agents' tools through the whole service with the pinned Copilot CLI, in its
 * bring-your-own-key mode against the fake model server (Chat Completions): the service
 * hands it the tool server as `--additional-mcp-config`, the CLI starts `orchestrator
 * mcp-server` with the token from its environment, and the model calls our tools; the
 * calls land in the file tracker, the store, the log and the metrics
 * (test/support/tool-session.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COPILOT_BIN, copilotEnv } from '../agent/copilot-cli/real-cli.js';
import { type ChatReply, type ChatUsage, chatDialect, chatOfferedTools } from '../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { pinnedCliPlan } from '../support/headless-cli.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { dbRuns, useServiceCleanup } from '../support/service.js';
import { expectToolCase, startToolCase, TOOL_CALLS, TOOL_ISSUE } from '../support/tool-session.js';

const plan = pinnedCliPlan('copilot', 'copilot');
if (!plan.run) console.warn(`tools with the real Copilot CLI skipped: ${plan.reason}`);

useServiceCleanup();
const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** How Copilot names a tool of our server: `<server>-<tool>`. */
const OURS = 'orchestrator-';
/** Every call of the turn reports these figures. */
const PER_CALL: Required<ChatUsage> = { prompt: 200, completion: 20, cachedPrompt: 50, reasoning: 0 };
const MAX_TOKENS = 1_000_000;
const FINAL_TEXT = 'Done with the tools.';

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

/** The tool results a request carries back, oldest first, as text. */
function toolResults(request: RecordedRequest): string[] {
  const messages = ((request.body as { messages?: ChatMessage[] } | null)?.messages ?? []).filter(
    (m) => m.role === 'tool',
  );
  return messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

/**
 * The model: the case's calls in a row, then the answer (in autopilot with the completion
 * that ends it); a request offering none of our tools (the credential check) gets text.
 */
function script(autopilot: boolean): (request: RecordedRequest) => ChatReply {
  return (request) => {
    if (!chatOfferedTools(request).some((t) => t.startsWith(OURS))) return { type: 'message', text: 'ready' };
    const next = TOOL_CALLS[toolResults(request).length];
    if (next === undefined) {
      const complete = [{ name: 'task_complete', arguments: { summary: FINAL_TEXT } }];
      return {
        type: 'message',
        text: FINAL_TEXT,
        ...(autopilot ? { toolCalls: complete } : {}),
        usage: PER_CALL,
      };
    }
    return {
      type: 'message',
      toolCalls: [{ name: `${OURS}${next.tool}`, arguments: next.input }],
      usage: PER_CALL,
    };
  };
}

/** The service's environment: the CLI and this Node on PATH, BYOK against `baseUrl`, a fresh HOME. */
function serviceEnv(baseUrl: string): Record<string, string> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'copilot-tools-home-'));
  homes.push(home);
  const env = copilotEnv(home, baseUrl);
  return { ...env, PATH: `${path.dirname(COPILOT_BIN)}:${path.dirname(process.execPath)}:${env.PATH}` };
}

/**
 * Runs the case with `block` as the copilot-cli block and checks what every posture must
 * show; returns the tools the model was offered.
 */
async function runCase(block: { mode: 'autopilot' | 'interactive' } & Record<string, unknown>) {
  const model = await FakeModelServer.start([chatDialect(script(block.mode === 'autopilot'))]);
  try {
    const c = await startToolCase(
      {
        agent: {
          kind: 'copilot-cli',
          command: COPILOT_BIN,
          max_turns: 1,
          max_tokens: MAX_TOKENS,
          stall_timeout_ms: 60_000,
          turn_timeout_ms: 120_000,
        },
        'copilot-cli': block,
      },
      serviceEnv(model.url),
      () => `model requests (tools offered): ${model.requests.map((r) => chatOfferedTools(r).join(' '))}`,
    );
    const { figures, run } = await expectToolCase(
      c,
      () => model.requests.map(toolResults).find((r) => r.length === TOOL_CALLS.length) ?? [],
    );
    // The credential check, then the turn's four calls: three tool calls and the answer.
    const ours = model.requests.map((r) => chatOfferedTools(r).filter((t) => t.startsWith(OURS)));
    expect(ours.map((t) => t.length > 0)).toEqual([false, true, true, true, true]);
    expect(ours[1]).toEqual(expect.arrayContaining(TOOL_CALLS.map((t) => `${OURS}${t.tool}`)));
    // Copilot's figures settle when its process exits (from the usage summary it writes then),
    // so mid-turn run_status has none to report yet: zero, and the token budget untouched.
    expect(figures.tokens).toEqual({ input: 0, output: 0, total: 0 });
    expect(figures.budgets).toEqual([
      { name: 'max_turns', used: 1, limit: 1, left: 0 },
      { name: 'max_tokens', used: 0, limit: MAX_TOKENS, left: MAX_TOKENS },
    ]);
    // No price is configured for the fake's model, so neither the figures nor the run have a cost.
    expect(figures.cost_usd).toBeNull();
    // After the turn the run holds the four calls exactly; the credential check is not the run's.
    expect(run).toMatchObject({
      input_tokens: 4 * PER_CALL.prompt,
      output_tokens: 4 * PER_CALL.completion,
      total_tokens: 4 * (PER_CALL.prompt + PER_CALL.completion),
    });
    const [row] = dbRuns(c.project.dbPath, TOOL_ISSUE) as unknown as Record<string, unknown>[];
    expect(row).toMatchObject({
      agent_kind: 'copilot-cli',
      cache_read_tokens: 4 * PER_CALL.cachedPrompt,
      cost_micro_usd: null,
      provenance: 'reported',
      unaccounted_turns: 0,
    });
    return model.requests.map(chatOfferedTools)[1] ?? [];
  } finally {
    await model.close();
  }
}

describe.skipIf(!plan.run)('the tool server with the real Copilot CLI', () => {
  itHasThePinnedCli(COPILOT_BIN);

  it('copilot calls tracker_comment (the comment lands in the file tracker), is refused an unconfigured state, and run_status gives its own run’s figures', {
    timeout: 180_000,
  }, async () => {
    // The default posture: autopilot with every tool allowed.
    const offered = await runCase({ mode: 'autopilot', max_autopilot_continues: 3 });
    expect(offered).toContain('bash');
  });

  it('a block that allows and shows only some tools still lets the model see and call ours', {
    timeout: 180_000,
  }, async () => {
    // Without --allow-tool=orchestrator the CLI refuses each call ("Permission denied"), and
    // without --available-tools=orchestrator it offers only bash.
    const offered = await runCase({ mode: 'interactive', allow_all_tools: false, available_tools: ['bash'] });
    expect(offered.filter((t) => !t.startsWith(OURS))).toEqual(['bash']);
  });
});
