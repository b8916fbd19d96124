/**
 * The skeleton with real processes: what a turn leaves behind (grandchildren in
 * the agent's group and ones that escaped it with setsid), and that nothing the
 * leftovers write reaches the caller once `runTurn` has resolved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  announcedPids,
  eventsOf,
  isAlive,
  killQuietly,
  makeScratch,
  makeSession,
  waitFor,
} from './harness.js';

const scratch = makeScratch();
const strays = new Set<number>();
const scripts: Record<string, string> = {};

/** Child program fragment: starts a sleeping grandchild in the agent's group and one in a session of its own. */
const SPAWN_GRANDCHILDREN = `
const { spawn } = require('node:child_process');
const sleeper = ['-e', 'setInterval(() => {}, 1000)'];
const inGroup = spawn(process.execPath, sleeper, { stdio: 'ignore' });
const escaped = spawn(process.execPath, sleeper, { stdio: 'ignore', detached: true });
inGroup.unref();
escaped.unref();
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
say({ t: 'child', pid: inGroup.pid, how: 'group' });
say({ t: 'child', pid: escaped.pid, how: 'setsid' });
`;

beforeAll(() => {
  scripts.hold = scratch.script(
    'spawn-and-hold.cjs',
    `${SPAWN_GRANDCHILDREN}\nsetInterval(() => {}, 1000);\n`,
  );
  // It lingers a little after announcing, as a real agent would while it finishes up.
  scripts.exit = scratch.script(
    'spawn-and-exit.cjs',
    `${SPAWN_GRANDCHILDREN}\nsetTimeout(() => say({ t: 'done', msg: 'finished' }), 400);\n`,
  );
  // A grandchild in the group inherits stdout and keeps writing valid lines after the agent exits.
  scripts.writer = scratch.script(
    'writing-heir.cjs',
    `const { spawn } = require('node:child_process');
const code = "setInterval(() => process.stdout.write(JSON.stringify({ t: 'late' }) + '\\\\n'), 20)";
const heir = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'inherit', 'ignore'] });
heir.unref();
process.stdout.write(JSON.stringify({ t: 'child', pid: heir.pid }) + '\\n');
setTimeout(() => process.stdout.write(JSON.stringify({ t: 'done', msg: 'agent finished' }) + '\\n'), 100);
`,
  );
  // The same, but the heir holds stdout open without writing anything.
  scripts.silent = scratch.script(
    'silent-heir.cjs',
    `const { spawn } = require('node:child_process');
const heir = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'inherit', 'ignore'] });
heir.unref();
process.stdout.write(JSON.stringify({ t: 'child', pid: heir.pid }) + '\\n');
process.stdout.write(JSON.stringify({ t: 'done', msg: 'agent finished' }) + '\\n');
`,
  );
});

afterAll(() => {
  killQuietly(strays);
  scratch.cleanup();
});

describe('ForkPerTurnSession reaping (real processes)', () => {
  it('a cancelled turn leaves no grandchild alive, in the group or escaped with setsid', async () => {
    const h = makeSession({
      script: scripts.hold!,
      workspace: scratch.workspace('cancel'),
      root: scratch.root,
    });
    const controller = new AbortController();
    const run = h.turn({ signal: controller.signal });
    await waitFor(() => announcedPids(h.log).length === 2, 10_000, 'both grandchildren to be announced');
    const pids = announcedPids(h.log);
    for (const pid of pids) strays.add(pid);
    expect(pids.every(isAlive)).toBe(true);
    controller.abort();
    const { outcome, events } = await run;
    expect(outcome.result.exitReason).toBe('turn_cancelled');
    expect(outcome.error?.kind).toBe('turn_cancelled');
    const agentPid = Number(eventsOf(events, 'turn_cancelled')[0]?.agentPid);
    expect(agentPid).toBeGreaterThan(1);
    for (const pid of [agentPid, ...pids]) {
      await waitFor(() => !isAlive(pid), 2_000, `pid ${pid} to be dead after the cancelled turn`);
    }
  });

  it('a turn that ends normally leaves no grandchild alive, in the group or escaped with setsid', async () => {
    const h = makeSession({
      script: scripts.exit!,
      workspace: scratch.workspace('normal'),
      root: scratch.root,
    });
    const { outcome } = await h.turn();
    const pids = announcedPids(h.log);
    for (const pid of pids) strays.add(pid);
    expect(pids).toHaveLength(2);
    expect(outcome.result.exitReason).toBe('turn_completed');
    expect(outcome.result.finalMessage).toBe('finished');
    for (const pid of pids) {
      await waitFor(() => !isAlive(pid), 2_000, `pid ${pid} to be dead after the turn ended`);
    }
  });

  it('a grandchild writing to inherited stdout after the agent exited delivers no event once runTurn resolved', async () => {
    const h = makeSession({
      script: scripts.writer!,
      workspace: scratch.workspace('writer'),
      root: scratch.root,
    });
    const { outcome, elapsedMs } = await h.turn();
    const [heir] = announcedPids(h.log);
    if (heir !== undefined) strays.add(heir);
    expect(outcome.result.exitReason).toBe('turn_completed');
    // Bounded by the 300 ms stdout grace plus reaping, not by the heir's life.
    expect(elapsedMs).toBeLessThan(5_000);
    const parsedAtResolution = h.log.parseCalls;
    // Give a surviving heir the time to write a dozen more lines: none may be parsed or delivered.
    const watchUntil = Date.now() + 300;
    await waitFor(() => Date.now() >= watchUntil || h.lateEvents.length > 0, 1_000, 'the watch window');
    expect(h.lateEvents).toEqual([]);
    expect(h.log.parseCalls).toBe(parsedAtResolution);
    await waitFor(() => heir !== undefined && !isAlive(heir), 2_000, 'the writing heir to be dead');
  });

  it('a silent grandchild holding stdout open does not keep runTurn from resolving after the stdout grace', async () => {
    const h = makeSession({
      script: scripts.silent!,
      workspace: scratch.workspace('silent'),
      root: scratch.root,
    });
    const run = h.turn();
    await waitFor(() => announcedPids(h.log).length === 1, 10_000, 'the heir to be announced');
    const [heir] = announcedPids(h.log);
    if (heir !== undefined) strays.add(heir);
    const deadline = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 4_000).unref());
    const result = await Promise.race([run, deadline]);
    if (result === 'hung') {
      // Free the pending read so the turn can end before the file finishes.
      killQuietly(strays);
      await run;
      throw new Error('runTurn did not resolve within 4 s while a silent grandchild held stdout open');
    }
    expect(result.outcome.result.exitReason).toBe('turn_completed');
    expect(result.elapsedMs).toBeLessThan(5_000);
    await waitFor(() => heir !== undefined && !isAlive(heir), 2_000, 'the silent heir to be dead');
  });
});
