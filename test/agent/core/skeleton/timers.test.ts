/**
 * The skeleton's three clocks against real processes: stall, absolute turn limit
 * and first event. Each must end the turn with its own error kind, whatever the
 * agent does meanwhile (stays quiet, ignores SIGTERM, chats without end).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, isAlive, makeScratch, makeSession, waitFor } from './harness.js';

const scratch = makeScratch();
const scripts: Record<string, string> = {};

beforeAll(() => {
  scripts.quiet = scratch.script(
    'one-line-then-quiet.cjs',
    `process.on('SIGTERM', () => {});
process.stdout.write(JSON.stringify({ t: 'hello' }) + '\\n');
setInterval(() => {}, 1000);`,
  );
  scripts.chatty = scratch.script(
    'chatty.cjs',
    `let n = 0;
setInterval(() => process.stdout.write(JSON.stringify({ t: 'tick', n: ++n }) + '\\n'), 50);`,
  );
  scripts.mute = scratch.script('mute.cjs', 'setInterval(() => {}, 1000);');
  scripts.garbage = scratch.script(
    'garbage-only.cjs',
    `setInterval(() => process.stdout.write('not json at all\\n'), 50);`,
  );
});

afterAll(() => {
  scratch.cleanup();
});

describe('ForkPerTurnSession timers (real processes)', () => {
  it('a stalled agent that ignores SIGTERM still ends the turn as response_timeout', async () => {
    const h = makeSession({
      script: scripts.quiet!,
      workspace: scratch.workspace('stall'),
      root: scratch.root,
      agent: { stallTimeoutMs: 300 },
    });
    const { outcome, events, elapsedMs } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('response_timeout');
    expect(outcome.error?.detail).toMatch(/stalled/);
    expect(elapsedMs).toBeGreaterThanOrEqual(300);
    // 300 ms stall + 500 ms SIGTERM grace + SIGKILL, with slack for a loaded machine.
    expect(elapsedMs).toBeLessThan(5_000);
    const pid = Number(eventsOf(events, 'turn_failed')[0]?.agentPid);
    await waitFor(() => !isAlive(pid), 2_000, 'the stalled agent to be dead');
  });

  it('the turn timeout fires although a chatty agent writes a line every 50 ms (activity never postpones it)', async () => {
    const h = makeSession({
      script: scripts.chatty!,
      workspace: scratch.workspace('turn'),
      root: scratch.root,
      // The first-event timeout covers a slow start on a loaded machine; the stall timer runs from the first tick.
      hooks: { firstEventTimeoutMs: 10_000 },
      // The stall limit is 30 lines' worth, so a loaded machine's pause does not pass for a stall.
      agent: { turnTimeoutMs: 4_000, stallTimeoutMs: 1_500 },
    });
    const { outcome, elapsedMs } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('turn_timeout');
    expect(elapsedMs).toBeGreaterThanOrEqual(4_000);
    expect(elapsedMs).toBeLessThan(9_000);
    // The lines did arrive: the stall timer had activity all along, so only the turn limit ended it.
    expect(h.log.accepted.filter((o) => o.t === 'tick').length).toBeGreaterThanOrEqual(3);
  });

  it('an agent that never writes a first event ends as response_timeout at the first-event timeout', async () => {
    const h = makeSession({
      script: scripts.mute!,
      workspace: scratch.workspace('first'),
      root: scratch.root,
      hooks: { firstEventTimeoutMs: 300 },
    });
    const { outcome, elapsedMs } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('response_timeout');
    expect(outcome.error?.detail).toMatch(/first event/);
    expect(elapsedMs).toBeGreaterThanOrEqual(300);
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it('rejected lines do not count as the first event: garbage alone still hits the first-event timeout', async () => {
    const h = makeSession({
      script: scripts.garbage!,
      workspace: scratch.workspace('garbage'),
      root: scratch.root,
      // Long enough for a slow start on a loaded machine to still write several garbage lines.
      hooks: { firstEventTimeoutMs: 2_000 },
    });
    const { outcome, events } = await h.turn();
    expect(outcome.error?.kind).toBe('response_timeout');
    expect(outcome.error?.detail).toMatch(/first event/);
    expect(eventsOf(events, 'malformed').length).toBeGreaterThanOrEqual(2);
  });
});
