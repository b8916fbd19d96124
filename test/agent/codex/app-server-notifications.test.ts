/**
 * Two app-server notifications the turn loop must act on: a `turn/failed` that
 * no `turn/completed` follows ends the turn at once (not when the stall timer
 * gives up on it), and `account/rateLimits/updated` becomes the shared
 * `rate_limits` event, in the spelling of the real wire and of the old exec
 * format. Runs go through the relaying fake app-server; decoders are also read
 * against the recorded fixtures in place.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { decodeExecLine } from '../../../src/agent/codex/parse.js';
import { decodeNotification } from '../../../src/agent/codex/protocol.js';
import { rateLimitWindows, readRateLimits } from '../../../src/agent/codex/rate-limits.js';
import type { AgentEvent } from '../../../src/domain/agent.js';
import { wire } from './fake-app-server.js';
import {
  appServerCommand,
  codexAdapter,
  codexParams,
  codexTestRoot,
  FIXTURES,
  fixturesSkipReason,
  runTurns,
  SAMPLE_ISSUE,
  verdict,
} from './support.js';

const t = codexTestRoot('codex-notifications-');
afterAll(() => t.cleanup());
const TIMEOUT = 30_000;
/** Far above what ending on the notification takes, far below the stall timer. */
const STALL_MS = 5_000;
const ENDED_WELL_BEFORE_STALL_MS = 2_500;
let fakes = 0;
const fake = (steps: Parameters<typeof fakeRuntime>[2]) =>
  fakeRuntime(path.join(t.root, 'fakes', `f${++fakes}`), 'codex', steps);

const turnFailedFlat = (message: string, info: unknown) =>
  JSON.stringify({
    method: 'turn/failed',
    params: {
      threadId: '$THREAD',
      turnId: '$TURN',
      error: { message, codexErrorInfo: info, additionalDetails: null },
    },
  });
const turnFailedNested = (message: string, info: unknown) =>
  JSON.stringify({
    method: 'turn/failed',
    params: {
      threadId: '$THREAD',
      turn: {
        id: '$TURN',
        items: [],
        status: 'failed',
        error: { message, codexErrorInfo: info, additionalDetails: null },
      },
    },
  });
const rateLimits = (snapshot: Record<string, unknown>) =>
  JSON.stringify({ method: 'account/rateLimits/updated', params: { rateLimits: snapshot } });

describe('codex app-server: turn/failed', () => {
  it.each([
    ['flat params', turnFailedFlat('the model refused the request', 'other'), 'turn_failed'],
    [
      'params with the turn, usageLimitExceeded',
      turnFailedNested("You've hit your usage limit. Try again in 2 hours.", 'usageLimitExceeded'),
      'usage_limit',
    ],
  ])(
    'a turn/failed without turn/completed (%s) ends the turn as failed as soon as it arrives (not at the stall timer)',
    async (_shape, failure, kind) => {
      const runtime = fake({
        steps: [
          { stdout: wire.turnStarted() },
          { stdout: wire.message('m1', 'trying') },
          { stdout: failure },
          { hang: true },
        ],
      });
      const adapter = codexAdapter();
      const session = await adapter.startSession(
        codexParams(t, appServerCommand(t, 'relay', runtime), { stallTimeoutMs: STALL_MS }),
      );
      try {
        const events: AgentEvent[] = [];
        // Timed from the line just before the failure: the stall timer restarts on every line.
        let lastLineAtMs: number | null = null;
        const outcome = await adapter.runTurn(session, {
          prompt: 'go',
          issue: SAMPLE_ISSUE,
          signal: new AbortController().signal,
          onEvent: (e) => {
            events.push(e);
            if (e.type === 'notification') lastLineAtMs = Date.now();
          },
        });
        const endedAtMs = Date.now();
        expect(verdict({ events, outcome }), outcome.error?.detail).toBe(`turn_failed/${kind}`);
        expect(lastLineAtMs).not.toBeNull();
        expect(endedAtMs - (lastLineAtMs ?? 0)).toBeLessThan(ENDED_WELL_BEFORE_STALL_MS);
        expect(events.filter((e) => e.type === 'turn_failed')).toMatchObject([{ errorKind: kind }]);
        if (kind === 'usage_limit') {
          const resetAtMs = outcome.error?.resetAtMs ?? 0;
          expect(resetAtMs - endedAtMs).toBeGreaterThan(2 * 3_600_000 - 60_000);
          expect(resetAtMs - endedAtMs).toBeLessThanOrEqual(2 * 3_600_000);
        }
      } finally {
        await adapter.stopSession(session);
      }
    },
    TIMEOUT,
  );

  it('decodes turn/failed as the end of its turn, with its error, in either shape', () => {
    const flat = decodeNotification('turn/failed', JSON.parse(turnFailedFlat('boom', 'other')).params);
    expect(flat).toMatchObject({
      type: 'turn_end',
      status: 'failed',
      turnId: '$TURN',
      error: { message: 'boom' },
    });
    const nested = decodeNotification(
      'turn/failed',
      JSON.parse(turnFailedNested('limit', 'usageLimitExceeded')).params,
    );
    expect(nested).toMatchObject({
      type: 'turn_end',
      status: 'failed',
      turnId: '$TURN',
      error: { message: 'limit', info: { name: 'usagelimitexceeded' } },
    });
  });
});

describe('codex rate limits', () => {
  it(
    'account/rateLimits/updated becomes a rate_limits event per limit; a snapshot without windows reports none; the turn goes on',
    async () => {
      const runtime = fake({
        steps: [
          {
            stdout: rateLimits({
              limitId: 'codex',
              limitName: null,
              primary: { usedPercent: 42.5, windowDurationMins: 300, resetsAt: 1_800_000_000 },
              secondary: { usedPercent: 7, windowDurationMins: 10_080, resetsAt: null },
              credits: null,
              planType: 'plus',
              rateLimitReachedType: null,
            }),
          },
          { stdout: rateLimits({ limitId: 'premium', primary: null, secondary: null }) },
          { stdout: wire.message('m1', 'done') },
          { stdout: wire.completed('completed') },
          { exit: 0 },
        ],
      });
      const { turns } = await runTurns(
        codexAdapter(),
        codexParams(t, appServerCommand(t, 'relay', runtime)),
        ['go'],
      );
      const run = turns[0] as NonNullable<(typeof turns)[0]>;
      expect(verdict(run)).toBe('turn_completed/none');
      expect(run.events.filter((e) => e.type === 'rate_limits')).toMatchObject([
        {
          limitId: 'codex',
          windows: [
            { window: 'primary', usedPercent: 42.5, windowMinutes: 300, resetsAtMs: 1_800_000_000_000 },
            { window: 'secondary', usedPercent: 7, windowMinutes: 10_080, resetsAtMs: null },
          ],
        },
        { limitId: 'premium', windows: [] },
      ]);
    },
    TIMEOUT,
  );

  it.skipIf(fixturesSkipReason() !== null)(
    'every account/rateLimits/updated of the recorded wires decodes to its limit (the recorded ones carry no window)',
    () => {
      for (const file of [
        'real-cli/codex-appserver/tool.jsonl',
        'codex-app-server/omnis_gate07_run-2026-09-20b.wire.jsonl',
      ]) {
        const updates = readFileSync(path.join(FIXTURES, file), 'utf8')
          .split('\n')
          .filter((l) => l.includes('"account/rateLimits/updated"'))
          .map((l) => JSON.parse(l) as { method: string; params: { rateLimits: { limitId: string } } });
        expect(updates.length, file).toBeGreaterThan(0);
        for (const u of updates) {
          expect(decodeNotification(u.method, u.params)).toMatchObject({
            type: 'rate_limits',
            limits: { limitId: u.params.rateLimits.limitId, windows: [] },
          });
        }
      }
    },
  );

  it("the old exec format's token_count carries snake_case rate limits; a relative reset counts from the session's clock", () => {
    const decoded = decodeExecLine(
      JSON.stringify({
        id: '1',
        msg: {
          type: 'token_count',
          info: { total_token_usage: { input_tokens: 10, output_tokens: 2 } },
          rate_limits: {
            primary: { used_percent: 100, window_minutes: 300, resets_in_seconds: 120 },
            secondary: { used_percent: 12.5, window_minutes: 10_080, resets_at: 1_800_000_000 },
          },
        },
      }),
    );
    if (!decoded.ok || decoded.line.type !== 'usage' || decoded.line.rateLimits === null)
      throw new Error(`not a usage line with rate limits: ${JSON.stringify(decoded)}`);
    expect(decoded.line.rateLimits.limitId).toBe('codex');
    expect(rateLimitWindows(decoded.line.rateLimits, 1_000_000)).toEqual([
      { window: 'primary', usedPercent: 100, windowMinutes: 300, resetsAtMs: 1_000_000 + 120_000 },
      { window: 'secondary', usedPercent: 12.5, windowMinutes: 10_080, resetsAtMs: 1_800_000_000_000 },
    ]);
  });

  it('a snapshot that is not an object, or with odd figures, reads as nothing or as unknown figures, never as a throw', () => {
    expect(readRateLimits(null)).toBeNull();
    expect(readRateLimits('codex')).toBeNull();
    expect(
      readRateLimits({
        primary: { usedPercent: -3, windowDurationMins: 'x', resetsAt: Number.NaN },
        secondary: 4,
      }),
    ).toEqual({
      limitId: 'codex',
      windows: [
        { window: 'primary', usedPercent: null, windowMinutes: null, resetsAtMs: null, resetsAfterMs: null },
      ],
    });
  });
});
