/**
 * The agents' tools through the whole service with a real runtime: the pinned Claude Code,
 * driven by the fake model server, is told about the tool server by the service, starts
 * `orchestrator mcp-server`, and calls our tools; the calls land in the file tracker, the
 * store, the log and the metrics (test/support/tool-session.ts).
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CLAUDE_CLI,
  OURS,
  REAL_CLI_MODEL,
  realCliEnv,
  realCliPlan,
  toolCaseScript,
  toolResults,
} from '../agent/claude-code/support.js';
import { anthropicDialect, DEFAULT_USAGE, offeredTools } from '../support/fake-model/anthropic.js';
import { FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { useServiceCleanup, waitFor } from '../support/service.js';
import {
  ASK_HUMAN_QUESTION,
  expectAskHumanCase,
  expectToolCase,
  startToolCase,
  TOOL_CALLS,
  TOOL_ISSUE,
} from '../support/tool-session.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`tools with the real Claude Code skipped: ${plan.reason}`);

useServiceCleanup();

describe.skipIf(!plan.run)('the tool server with the real Claude Code', () => {
  itHasThePinnedCli(CLAUDE_CLI);

  it('claude calls tracker_comment (the comment lands in the file tracker), is refused an unconfigured state, and run_status gives its own run’s figures', {
    timeout: 180_000,
  }, async () => {
    const model = await FakeModelServer.start([anthropicDialect(toolCaseScript)]);
    try {
      const c = await startToolCase(
        {
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
        realCliEnv(model.url),
        () => `model requests: ${model.requests.length}`,
      );
      const { figures, run } = await expectToolCase(
        c,
        () => model.requests.map(toolResults).find((r) => r.length === TOOL_CALLS.length) ?? [],
      );
      // run_status came after three of the turn's four model calls: the input the stream had
      // reported by then is three of the run's four equal calls, to the token.
      const perCall = DEFAULT_USAGE.input + DEFAULT_USAGE.cacheRead;
      expect(run.input_tokens).toBe(4 * perCall);
      expect(figures.tokens.input).toBe(3 * perCall);
      // Output is counted as each call's stream reports it, in full only at the call's end.
      expect(figures.tokens.output).toBeLessThan(run.output_tokens);
      expect(figures.tokens.total).toBe(figures.tokens.input + figures.tokens.output);
      expect(figures.budgets).toEqual([
        { name: 'max_turns', used: 1, limit: 1, left: 0 },
        {
          name: 'max_tokens',
          used: figures.tokens.total,
          limit: 1_000_000,
          left: 1_000_000 - figures.tokens.total,
        },
      ]);
    } finally {
      await model.close();
    }
  });

  it('ask_human posts the question once and parks the issue in the blocked state after the turn', {
    timeout: 180_000,
  }, async () => {
    const model = await FakeModelServer.start([
      anthropicDialect((request) => {
        if (!offeredTools(request).some((t) => t.startsWith(OURS))) return { type: 'message', text: 'OK' };
        return toolResults(request).length === 0
          ? {
              type: 'message',
              toolCall: { name: `${OURS}ask_human`, input: { question: ASK_HUMAN_QUESTION } },
            }
          : { type: 'message', text: 'I asked; waiting for an answer.' };
      }),
    ]);
    try {
      const c = await startToolCase(
        {
          agent: { kind: 'claude-code', command: CLAUDE_CLI, max_turns: 3, stall_timeout_ms: 60_000 },
          'claude-code': { model: REAL_CLI_MODEL },
        },
        realCliEnv(model.url),
        () => `model requests: ${model.requests.length}`,
      );
      await expectAskHumanCase(c);
      expect(toolResults(model.requests.at(-1) as RecordedRequest).join('')).not.toMatch(/tool_/);
    } finally {
      await model.close();
    }
  });
});

describe.skipIf(!plan.run)('the session token with the real Claude Code', () => {
  it('a live token the agent prints is masked in the log and the comments, as a credential is', {
    timeout: 180_000,
  }, async () => {
    const model = await FakeModelServer.start([
      anthropicDialect((request) => {
        if (!offeredTools(request).some((t) => t.startsWith(OURS))) return { type: 'message', text: 'OK' };
        const printed = toolResults(request);
        return printed.length === 0
          ? {
              type: 'message',
              toolCall: { name: 'Bash', input: { command: 'printenv ORCHESTRATOR_TOOLS_TOKEN' } },
            }
          : { type: 'message', text: `My tool token is ${printed[0]}` };
      }),
    ]);
    try {
      const c = await startToolCase(
        {
          agent: { kind: 'claude-code', command: CLAUDE_CLI, max_turns: 1, stall_timeout_ms: 60_000 },
          'claude-code': { model: REAL_CLI_MODEL },
          tracker: { comments: { on_completion: true } },
        },
        realCliEnv(model.url),
        () => `model requests: ${model.requests.length}`,
      );
      await waitFor('the handoff', () => c.project.issue(TOOL_ISSUE).state === 'Review', {
        timeoutMs: 150_000,
        explain: c.explain,
      });
      await c.service.stop(30_000);
      // The token as Bash printed it to the model: 43 base64url characters.
      const token = /[A-Za-z0-9_-]{43}/.exec(
        toolResults(model.requests.at(-1) as RecordedRequest).join(''),
      )?.[0];
      expect(token, c.explain()).toBeDefined();
      const comments = (c.project.issue(TOOL_ISSUE).comments ?? []).map((m) => m.body);
      expect(comments.some((body) => body.includes('My tool token is'))).toBe(true);
      const written = [readFileSync(c.service.logPath, 'utf8'), c.service.stderr(), ...comments].join('\n');
      expect(written).not.toContain(token);
      expect(written).toContain('My tool token is');
    } finally {
      await model.close();
    }
  });
});
