/**
 * Runs a one-off script on a host (workspace creation, hooks, removal) the way
 * `runHook` runs one locally: `sh -c <script>` as the leader of its own process
 * group, stderr joined onto stdout so the output keeps its order, the head of the
 * output kept up to a cap, and a timeout or abort that kills the whole remote group
 * rather than just the shell, whose children would otherwise hold the channel open.
 * A script leaves nothing running: once it exits, what is left in its group is
 * killed too. sshd keeps the channel open while a background child holds its output,
 * and the wrapper's watcher only acts on a lost connection, so without that kill such
 * a child would hold the result back until it ended, and one that let go of the
 * output would run on under init.
 * A working directory that cannot be entered is the `bad_cwd` failure, as for `launch`.
 * A connection lost mid-run is a result with no exit code and a note in the output:
 * the script may have done part of its work.
 */

import { performance } from 'node:perf_hooks';
import type { ClientChannel } from 'ssh2';
import type { RemoteFailure, RemoteScriptParams, RemoteScriptResult } from '../domain/remote.js';
import { killRemoteGroup } from './group-kill.js';
import type { LaunchContext } from './launch.js';
import { envPreamble, shellQuote } from './quote.js';
import { newNonce, preambleEndLine, readStartStatus, wrapperCommand } from './wrapper.js';

/** Kept output when the caller gives no cap. */
export const DEFAULT_SCRIPT_OUTPUT_BYTES = 256 * 1024;
/** How long output is still read after the group was killed, before the channel is closed. */
export const SCRIPT_DRAIN_MS = 2_000;

/** Runs `params.script` to completion; never rejects. */
export async function runRemoteScript(
  context: LaunchContext,
  params: RemoteScriptParams,
): Promise<{ ok: true; result: RemoteScriptResult } | RemoteFailure> {
  const startedAt = performance.now();
  const elapsedMs = () => Math.round(performance.now() - startedAt);
  if (params.signal?.aborted) {
    return { ok: false, reason: 'failed', message: `ssh ${context.name}: script aborted before it started` };
  }
  const nonce = newNonce();
  const preamble = envPreamble(params.env, preambleEndLine(nonce));
  if (!preamble.ok)
    return { ok: false, reason: 'failed', message: `ssh ${context.name}: ${preamble.message}` };
  const opened = await context.connections.exec(
    wrapperCommand({
      nonce,
      cwd: params.cwd,
      mergeStderr: true,
      exec: `/bin/sh -c ${shellQuote(params.script)}`,
    }),
  );
  if (!opened.ok) return opened;
  const { channel } = opened;
  channel.on('error', () => {});

  const output = new CappedOutput(params.maxOutputBytes ?? DEFAULT_SCRIPT_OUTPUT_BYTES);
  const run = new ScriptRun(context, channel, output, params);
  channel.write(preamble.text);
  // The script reads EOF from stdin, as a local hook reads /dev/null.
  channel.end();
  const started = await readStartStatus(channel, nonce, context.startTimeoutMs);
  if (started.skipped !== '') {
    context.onWarn('skipped output the host printed before the script started', {
      host: context.name,
      output: started.skipped.slice(0, 2_000),
    });
  }
  const { status } = started;
  if (status.kind !== 'started') {
    run.dispose();
    const stderr = await run.stderrAfterFailedStart();
    const detail = stderr === '' ? '' : `: ${stderr}`;
    if (status.kind === 'bad_cwd') {
      return {
        ok: false,
        reason: 'bad_cwd',
        message: `ssh ${context.name}: working directory ${params.cwd} cannot be entered${detail}`,
      };
    }
    const why = status.kind === 'no_env' ? 'the environment was not received' : status.why;
    return { ok: false, reason: 'failed', message: `ssh ${context.name}: ${why}${detail}` };
  }
  output.push(started.rest);
  const ended = await run.follow(status.pid);
  return {
    ok: true,
    result: {
      exitCode: ended.exitCode,
      signal: ended.signal,
      timedOut: ended.timedOut,
      output: [output.text(), ...ended.notes].filter((part) => part !== '').join('\n'),
      durationMs: elapsedMs(),
      connectionLost: ended.connectionLost,
    },
  };
}

/** The timers, kill and exit bookkeeping of one script run. */
class ScriptRun {
  #pid: number | null = null;
  #timedOut = false;
  #aborted = false;
  #killed = false;
  #exit: { code: number | null; signal: string | null } | null = null;
  /** The kill of the group's leftovers, sent once the script exited; awaited before the result. */
  #reaped: Promise<void> | null = null;
  /** True when a process outside the group still held the channel after the leftovers were killed. */
  #abandoned = false;
  #closed = false;
  readonly #closedPromise: Promise<void>;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #stderrBeforeStart: Buffer[] = [];

  constructor(
    private readonly context: LaunchContext,
    private readonly channel: ClientChannel,
    private readonly output: CappedOutput,
    private readonly params: RemoteScriptParams,
  ) {
    channel.once('exit', (code: number | null, signal?: string) => {
      this.#exit = { code: code ?? null, signal: signal ?? null };
      // Over: a timeout or abort from here on must not relabel the result.
      this.dispose();
      this.#reapLeftovers();
    });
    this.#closedPromise = new Promise((resolve) => {
      channel.once('close', () => {
        this.#closed = true;
        resolve();
      });
    });
    channel.stderr.on('data', (chunk: Buffer) => {
      if (this.#pid === null) this.#stderrBeforeStart.push(chunk);
      else output.push(chunk);
    });
    if (params.timeoutMs > 0) {
      this.#timer = setTimeout(() => {
        this.#timedOut = true;
        this.#kill();
      }, params.timeoutMs);
    }
    params.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = () => {
    this.#aborted = true;
    this.#kill();
  };

  /** Stops the timers and the abort listener. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.params.signal?.removeEventListener('abort', this.#onAbort);
  }

  /** Collects the output from here on and waits for the end; the group is killed on timeout or abort. */
  async follow(pid: number): Promise<{
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    notes: string[];
    connectionLost: boolean;
  }> {
    this.#pid = pid;
    for (const chunk of this.#stderrBeforeStart.splice(0)) this.output.push(chunk);
    if (this.#timedOut || this.#aborted) this.#kill();
    if (this.#exit !== null) this.#reapLeftovers();
    this.channel.on('data', (chunk: Buffer) => this.output.push(chunk));
    this.channel.resume();
    await this.#closedPromise;
    this.dispose();
    await this.#reaped;
    const notes: string[] = [];
    if (this.#abandoned) notes.push('[a background process kept the output open; stopped reading]');
    if (this.#timedOut) {
      notes.push(`[script timed out after ${this.params.timeoutMs} ms; its remote process group was killed]`);
    }
    if (this.#aborted) notes.push('[script aborted; its remote process group was killed]');
    const connectionLost = this.#exit === null && !this.#killed;
    if (connectionLost) notes.push('[connection lost before the exit status arrived]');
    return {
      exitCode: this.#exit?.code ?? null,
      signal: this.#exit?.signal ?? (this.#killed ? 'SIGKILL' : null),
      timedOut: this.#timedOut,
      notes,
      connectionLost,
    };
  }

  /** Stderr written before the start status (a `cd` error), once the channel ended (bounded). */
  async stderrAfterFailedStart(): Promise<string> {
    this.channel.resume();
    await Promise.race([this.#closedPromise, new Promise((resolve) => setTimeout(resolve, SCRIPT_DRAIN_MS))]);
    if (!this.#closed) this.channel.close();
    return Buffer.concat(this.#stderrBeforeStart).toString('utf8').trim().slice(0, 2_000);
  }

  /** Kills what the exited script left in its group; once, as soon as the pid is known. */
  #reapLeftovers(): void {
    if (this.#pid === null || this.#reaped !== null || this.#killed) return;
    this.#reaped = killRemoteGroup(this.context.connections, this.#pid);
    // A child that left the group escapes that kill and could hold the channel open.
    setTimeout(() => {
      if (this.#closed) return;
      this.#abandoned = true;
      this.channel.close();
    }, SCRIPT_DRAIN_MS).unref();
  }

  #kill(): void {
    // Before the pid is known, `follow` kills as soon as it is.
    if (this.#pid === null || this.#killed || this.#closed || this.#exit !== null) return;
    this.#killed = true;
    void killRemoteGroup(this.context.connections, this.#pid);
    // Children that escaped the group could hold the channel open: stop reading after a bound.
    setTimeout(() => {
      if (!this.#closed) this.channel.close();
    }, SCRIPT_DRAIN_MS).unref();
  }
}

/** Keeps the first `limitBytes` of everything pushed and counts the rest. */
class CappedOutput {
  readonly #chunks: Buffer[] = [];
  #keptBytes = 0;
  #droppedBytes = 0;

  constructor(readonly limitBytes: number) {}

  push(chunk: Buffer): void {
    const roomBytes = Math.max(0, this.limitBytes - this.#keptBytes);
    const kept = chunk.subarray(0, roomBytes);
    if (kept.length > 0) this.#chunks.push(kept);
    this.#keptBytes += kept.length;
    this.#droppedBytes += chunk.length - kept.length;
  }

  text(): string {
    const kept = Buffer.concat(this.#chunks).toString('utf8');
    if (this.#droppedBytes === 0) return kept;
    return `${kept}\n[output truncated at ${this.limitBytes} bytes: ${this.#droppedBytes} bytes dropped]`;
  }
}
