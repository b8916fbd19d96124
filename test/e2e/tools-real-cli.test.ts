/**
 * The agents' tools through the whole service with a real runtime: the pinned Claude Code,
 * driven by the fake model server, is told about the tool server by the service, starts
 * `orchestrator mcp-server`, and calls our tools; the calls land in the file tracker, the
 * store, the log and the metrics.
 */
import { describe, expect, it } from 'vitest';
import { CLAUDE_CLI, REAL_CLI_MODEL, realCliEnv, realCliPlan } from '../agent/claude-code/support.js';
import {
  type AnthropicReply,
  anthropicDialect,
  DEFAULT_USAGE,
  offeredTools,
} from '../support/fake-model/anthropic.js';
import { FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { freePort } from '../support/ports.js';
import { createProject, dbRuns, startService, useServiceCleanup, waitFor } from '../support/service.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`tools with the real Claude Code skipped: ${plan.reason}`);

useServiceCleanup();

const COMMENT = 'Progress note from the agent.';
const OUR = 'mcp__orchestrator__';

/** The tool results a request carries back, oldest first, as text. */
function toolResults(request: RecordedRequest): string[] {
  const messages = (request.body as { messages?: { content?: unknown }[] } | null)?.messages ?? [];
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content
          .filter((b) => (b as { type?: unknown }).type === 'tool_result')
          .map((b) => JSON.stringify((b as { content?: unknown }).content))
      : [],
  );
}

/** The model: our three tools in a row (comment, a refused transition, run_status), then done. */
function script(request: RecordedRequest): AnthropicReply {
  // Requests that offer no tools are the CLI's own side calls.
  if (!offeredTools(request).some((t) => t.startsWith(OUR))) return { type: 'message', text: 'OK' };
  const calls: { name: string; input: Record<string, unknown> }[] = [
    { name: `${OUR}tracker_comment`, input: { body: COMMENT } },
    { name: `${OUR}tracker_transition`, input: { state: 'Shipped' } },
    { name: `${OUR}run_status`, input: {} },
  ];
  const next = calls[toolResults(request).length];
  return next === undefined
    ? { type: 'message', text: 'Done with the tools.' }
    : { type: 'message', toolCall: next };
}

describe.skipIf(!plan.run)('the tool server with the real Claude Code', () => {
  itHasThePinnedCli(CLAUDE_CLI);

  it('claude calls tracker_comment (the comment lands in the file tracker), is refused an unconfigured state, and run_status gives its own run’s figures', {
    timeout: 180_000,
  }, async () => {
    const model = await FakeModelServer.start([anthropicDialect(script)]);
    try {
      const project = createProject({
        issues: [{ id: '1', identifier: 'T-1', title: 'Use the tools', state: 'Todo', description: 'Go.' }],
        config: {
          mock: null,
          agent: {
            kind: 'claude-code',
            command: CLAUDE_CLI,
            max_turns: 1,
            max_tokens: 1_000_000,
            stall_timeout_ms: 60_000,
            turn_timeout_ms: 120_000,
          },
          'claude-code': { model: REAL_CLI_MODEL },
        },
      });
      const port = await freePort();
      const service = startService(project, { env: realCliEnv(model.url), args: ['--port', String(port)] });
      const explain = () => `${service.tail(40)}\nmodel requests: ${model.requests.length}`;
      await waitFor('the handoff', () => project.issue('T-1').state === 'Review', {
        timeoutMs: 150_000,
        explain,
      });

      // The comment the agent wrote through tracker_comment, on its own issue, once.
      const comments = (project.issue('T-1').comments ?? []).filter((c) => c.body === COMMENT);
      expect(comments, explain()).toHaveLength(1);

      // What each call returned to the model, in order.
      const last = model.requests.filter((r) => toolResults(r).length === 3).at(-1);
      expect(last, explain()).toBeDefined();
      const [commented, refused, status] = toolResults(last as RecordedRequest);
      expect(commented).toContain('\\"commented\\":true');
      expect(refused).toMatch(/tool_state_not_configured/);
      expect(refused).toContain('Shipped');
      const figures = JSON.parse(JSON.parse(status as string)[0].text) as {
        turn: number;
        elapsed_ms: number;
        tokens: { input: number; output: number; total: number };
        budgets: { name: string; used: number; limit: number; left: number }[];
      };
      expect(figures.turn).toBe(1);

      const [run] = dbRuns(project.dbPath);
      expect(run).toMatchObject({ exit_kind: 'succeeded', turns: 1 });
      // run_status came after three of the turn's four model calls: the input the stream had
      // reported by then is three of the run's four equal calls, to the token.
      const perCall = DEFAULT_USAGE.input + DEFAULT_USAGE.cacheRead;
      expect(run?.input_tokens).toBe(4 * perCall);
      expect(figures.tokens.input).toBe(3 * perCall);
      // Output is counted as each call's stream reports it, in full at the call's end only.
      expect(figures.tokens.output).toBeLessThan(run?.output_tokens as number);
      expect(figures.tokens.total).toBe(figures.tokens.input + figures.tokens.output);
      expect(figures.elapsed_ms).toBeGreaterThan(0);
      expect(figures.elapsed_ms).toBeLessThan(
        Date.parse(run?.ended_at as string) - Date.parse(run?.started_at as string),
      );
      expect(figures.budgets).toEqual([
        { name: 'max_turns', used: 1, limit: 1, left: 0 },
        {
          name: 'max_tokens',
          used: figures.tokens.total,
          limit: 1_000_000,
          left: 1_000_000 - figures.tokens.total,
        },
      ]);

      // Logged, counted per run.
      const logged = service
        .logs()
        .filter((l) => l.msg === 'tool call' || l.msg === 'tool call refused or failed');
      expect(logged.map((l) => [l.tool, l.outcome])).toEqual([
        ['tracker_comment', 'ok'],
        ['tracker_transition', 'tool_state_not_configured'],
        ['run_status', 'ok'],
      ]);
      // Per run in the API, and in the metrics.
      const issue = (await (await fetch(`http://127.0.0.1:${port}/api/v1/issues/T-1`)).json()) as {
        runs: { tool_calls: unknown }[];
      };
      expect(issue.runs[0]?.tool_calls).toEqual([
        { tool: 'run_status', outcome: 'ok', calls: 1 },
        { tool: 'tracker_comment', outcome: 'ok', calls: 1 },
        { tool: 'tracker_transition', outcome: 'tool_state_not_configured', calls: 1 },
      ]);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toContain(
        'orchestrator_tool_server_calls_total{tool="tracker_comment",outcome="ok"} 1',
      );
      expect(metrics).toContain(
        'orchestrator_tool_server_calls_total{tool="tracker_transition",outcome="tool_state_not_configured"} 1',
      );
    } finally {
      await model.close();
    }
  });
});
