import { describe, expect, it } from 'vitest';
import type { EventInput } from '../../../src/agent/core/fork-per-turn.js';
import { decodeLine, decodeStreamLine } from '../../../src/agent/mock/stream.js';
import { StreamSession } from '../../../src/agent/mock/stream-session.js';
import { MOCK_USAGE_SOURCES } from '../../../src/agent/mock/usage.js';
import { turnContext } from '../../support/turn-context.js';

const LINES = [
  '{"type":"start","session_id":"s-1","model":"m"}',
  '{"type":"start"}',
  '{"type":"message","id":"r-1","model":"m","text":"hi","usage":{"input":10,"output":2,"cache_read":3}}',
  '{"type":"message","id":"r-2","model":"m","text":"","usage":{"input":-1,"output":2}}',
  '{"type":"message","model":"m"}',
  '{"type":"tool_call","id":"t-1","name":"Bash","input":{"command":"ls"}}',
  '{"type":"tool_call","id":"t-1"}',
  '{"type":"tool_result","id":"t-1","ok":true}',
  '{"type":"tool_result"}',
  '{"type":"notice","text":"n"}',
  '{"type":"result","status":"success","text":"done"}',
  '{"type":"result","status":"maybe"}',
  '{"type":"other"}',
  '[1]',
  'null',
  'not json',
];

describe('the built-in stream decoder', () => {
  it('decodeLine gives the line or the reason decodeStreamLine wraps', () => {
    for (const text of LINES) {
      const line = decodeLine(text);
      expect(decodeStreamLine(text)).toEqual(
        typeof line === 'string' ? { ok: false, reason: line } : { ok: true, line },
      );
    }
  });

  it('the session turns lines into verdicts, events and run usage', () => {
    const stream = new StreamSession(MOCK_USAGE_SOURCES, 'mock-test');
    const hooks = stream.hooks({ buildArgs: () => [] });
    const events: EventInput[] = [];
    const ctx = turnContext((event) => events.push(event));
    hooks.beginTurn?.(ctx);
    const verdicts = LINES.map((line) => hooks.parseLine(line, ctx));
    hooks.settleUsage(ctx, { cancelled: false });
    expect(verdicts.map((v) => v.type)).toEqual([
      'accepted',
      'rejected',
      'accepted',
      'accepted',
      'rejected',
      'accepted',
      'rejected',
      'accepted',
      'rejected',
      'accepted',
      'accepted',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
    ]);
    expect(verdicts[10]).toEqual({
      type: 'accepted',
      terminal: { type: 'result', status: 'success', text: 'done' },
    });
    const usage = events.filter((e) => e.type === 'token_usage');
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({
      usage: { inputTokens: 13, outputTokens: 2, cacheReadTokens: 3, cacheWriteTokens: 0, totalTokens: 15 },
      usageByModel: { m: { inputTokens: 13, outputTokens: 2, cacheReadTokens: 3, totalTokens: 15 } },
      model: 'm',
    });
    expect(events.map((e) => e.type)).toEqual([
      'session_started',
      'token_usage',
      'notification',
      'tool_result',
      'notification',
    ]);
    expect(hooks.getUsage?.().usage).toMatchObject({ inputTokens: 13, outputTokens: 2, totalTokens: 15 });
  });
});
