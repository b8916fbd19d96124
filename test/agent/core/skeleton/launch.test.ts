/**
 * The skeleton's launch path with real processes: what must stop a turn before
 * anything is spawned (a cancelled signal, a workspace swapped for a symlink out
 * of the root, a missing binary), how the prompt reaches the agent, and stopping
 * a session mid-turn.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, makeScratch, makeSession, waitFor } from './harness.js';

const MiB = 1024 * 1024;
const scratch = makeScratch();
const scripts: Record<string, string> = {};

const spawnLog = (name: string) => path.join(scratch.dir, `spawned-${name}.log`);
const spawnCount = (name: string) =>
  existsSync(spawnLog(name)) ? readFileSync(spawnLog(name), 'utf8').split('\n').filter(Boolean).length : 0;

beforeAll(() => {
  // argv[2]: a file to append this process's pid to, so a test can count spawns.
  scripts.record = scratch.script(
    'record.cjs',
    `require('node:fs').appendFileSync(process.argv[2], process.pid + '\\n');
process.stdout.write(JSON.stringify({ t: 'done', msg: 'ran in ' + process.cwd() }) + '\\n');`,
  );
  scripts.stdin = scratch.script(
    'read-stdin.cjs',
    `const data = require('node:fs').readFileSync(0);
const sha = require('node:crypto').createHash('sha256').update(data).digest('hex');
process.stdout.write(JSON.stringify({ t: 'done', msg: 'read', len: data.length, sha }) + '\\n');`,
  );
  scripts.hold = scratch.script(
    'hold.cjs',
    `process.stdout.write(JSON.stringify({ t: 'ready' }) + '\\n');
setInterval(() => {}, 1000);`,
  );
  scripts.notExecutable = scratch.script('not-executable.sh', '#!/bin/sh\necho hi\n');
  chmodSync(scripts.notExecutable, 0o644);
});

afterAll(() => {
  scratch.cleanup();
});

describe('ForkPerTurnSession launch (real processes)', () => {
  it('a signal aborted before the turn starts ends it as turn_cancelled without spawning anything', async () => {
    const h = makeSession({
      script: scripts.record!,
      workspace: scratch.workspace('pre-cancel'),
      root: scratch.root,
      hooks: { args: [spawnLog('pre-cancel')] },
    });
    const controller = new AbortController();
    controller.abort();
    const { outcome, events } = await h.turn({ signal: controller.signal });
    expect(outcome.result.exitReason).toBe('turn_cancelled');
    expect(outcome.error?.kind).toBe('turn_cancelled');
    expect(spawnCount('pre-cancel')).toBe(0);
    expect(h.log.buildArgsCalls).toBe(0);
    const cancelled = eventsOf(events, 'turn_cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]?.agentPid).toBe('');
  });

  it('a workspace swapped for a symlink out of the root between turns fails the next turn with invalid_workspace_cwd, unspawned', async () => {
    const ws = scratch.workspace('swap');
    const h = makeSession({
      script: scripts.record!,
      workspace: ws,
      root: scratch.root,
      hooks: { args: [spawnLog('swap')] },
    });
    const first = await h.turn();
    expect(first.outcome.result.exitReason).toBe('turn_completed');
    expect(spawnCount('swap')).toBe(1);

    const outside = path.join(scratch.dir, 'outside');
    mkdirSync(outside);
    rmSync(ws, { recursive: true });
    symlinkSync(outside, ws);

    const second = await h.turn();
    expect(second.outcome.result.exitReason).toBe('turn_failed');
    expect(second.outcome.error?.kind).toBe('invalid_workspace_cwd');
    expect(spawnCount('swap')).toBe(1);
    expect(h.log.buildArgsCalls).toBe(1);
  });

  it.each([
    { what: 'a missing binary', command: '/nonexistent/bin/agent-cli' },
    { what: 'a file without the execute bit', command: 'NOT_EXECUTABLE' },
  ])('$what is agent_not_found, not a crash to retry', async ({ command }) => {
    const h = makeSession({
      script: scripts.record!,
      workspace: scratch.workspace(`missing-${command.length}`),
      root: scratch.root,
      command: command === 'NOT_EXECUTABLE' ? scripts.notExecutable! : command,
    });
    const { outcome } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('agent_not_found');
  });

  it('the prompt-on-stdin path delivers a 1 MiB multi-byte prompt whole and byte-exact', async () => {
    const h = makeSession({
      script: scripts.stdin!,
      workspace: scratch.workspace('stdin'),
      root: scratch.root,
      hooks: { promptOnStdin: true },
    });
    const unit = 'Fix the flaky test — naïve retry ✓ 重试\n';
    const prompt = unit.repeat(Math.ceil(MiB / Buffer.byteLength(unit)));
    expect(Buffer.byteLength(prompt)).toBeGreaterThanOrEqual(MiB);
    const { outcome } = await h.turn({ prompt });
    expect(outcome.result.exitReason).toBe('turn_completed');
    const done = h.log.accepted.find((o) => o.t === 'done');
    expect(done?.len).toBe(Buffer.byteLength(prompt));
    expect(done?.sha).toBe(createHash('sha256').update(prompt).digest('hex'));
  });

  it('without prompt-on-stdin the child reads immediate EOF instead of blocking on an open stdin', async () => {
    const h = makeSession({
      script: scripts.stdin!,
      workspace: scratch.workspace('no-stdin'),
      root: scratch.root,
      hooks: { promptOnStdin: false },
      // A blocked read would end as turn_timeout instead of turn_completed.
      agent: { turnTimeoutMs: 5_000 },
    });
    const { outcome } = await h.turn({ prompt: 'this prompt must not be written to stdin' });
    expect(outcome.result.exitReason).toBe('turn_completed');
    expect(h.log.accepted.find((o) => o.t === 'done')?.len).toBe(0);
  });

  it('an abort that lands while the agent is being spawned still cancels the turn (not lost until the turn timeout)', async () => {
    const h = makeSession({
      script: scripts.hold!,
      workspace: scratch.workspace('abort-in-spawn'),
      root: scratch.root,
      // A lost abort would end as turn_timeout, far past the bound below even on a loaded machine.
      agent: { turnTimeoutMs: 10_000 },
    });
    const controller = new AbortController();
    const run = h.turn({ signal: controller.signal });
    controller.abort();
    const { outcome, elapsedMs } = await run;
    expect(outcome.result.exitReason).toBe('turn_cancelled');
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it('stop() called while the agent is being spawned still cancels the turn (not lost until the turn timeout)', async () => {
    const h = makeSession({
      script: scripts.hold!,
      workspace: scratch.workspace('stop-in-spawn'),
      root: scratch.root,
      agent: { turnTimeoutMs: 10_000 },
    });
    const run = h.turn();
    await h.session.stop();
    const { outcome, elapsedMs } = await run;
    expect(outcome.result.exitReason).toBe('turn_cancelled');
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it('stop() mid-turn cancels the running turn; a second concurrent runTurn is refused', async () => {
    const h = makeSession({
      script: scripts.hold!,
      workspace: scratch.workspace('stop'),
      root: scratch.root,
    });
    const run = h.turn();
    await waitFor(() => h.log.accepted.some((o) => o.t === 'ready'), 10_000, 'the agent to be ready');
    await expect(h.turn()).rejects.toThrow(/already running/);
    await h.session.stop();
    const { outcome } = await run;
    expect(outcome.result.exitReason).toBe('turn_cancelled');
    expect(outcome.error?.kind).toBe('turn_cancelled');
    // Stopping an idle session is a no-op.
    await h.session.stop();
  });
});
