/**
 * Starts a long-running command (an agent) on a host through the wrapper: the
 * environment goes over stdin, the wrapper reports the command's pid (its process
 * group id), and from then on the channel is the command's stdin, stdout and stderr.
 * The status line is taken off stdout here, so the caller reads exactly what the
 * command wrote.
 */
import { PassThrough, Writable } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import type { RemoteExit, RemoteFailure, RemoteLaunchParams, RemoteProcess } from '../domain/remote.js';
import type { HostConnections } from './connection.js';
import { killRemoteGroup, terminateRemoteGroup } from './group-kill.js';
import { envPreamble, shellQuote } from './quote.js';
import { newNonce, preambleEndLine, readStartStatus, wrapperCommand } from './wrapper.js';

/** How long stderr is still collected after a failed start, for the message. */
const FAILED_START_DRAIN_MS = 2_000;

export interface LaunchContext {
  /** The host as configured, for messages. */
  name: string;
  connections: HostConnections;
  /** Bound on the wait for the wrapper's start status. */
  startTimeoutMs: number;
  onWarn: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * The program as a quoted word for the host's shell; a leading `~/` stays outside the
 * quotes (as `$HOME`) so the host's home is used, while spaces and quotes survive.
 */
export function programWord(program: string): string {
  return program.startsWith('~/') ? `"$HOME"/${shellQuote(program.slice(2))}` : shellQuote(program);
}

/** Starts `params.command` on the host as the leader of its own process group. */
export async function launchRemote(
  context: LaunchContext,
  params: RemoteLaunchParams,
): Promise<{ ok: true; process: RemoteProcess } | RemoteFailure> {
  const nonce = newNonce();
  const preamble = envPreamble(params.env, preambleEndLine(nonce));
  if (!preamble.ok)
    return { ok: false, reason: 'failed', message: `ssh ${context.name}: ${preamble.message}` };
  const exec = [programWord(params.command), ...params.args.map(shellQuote)].join(' ');
  const opened = await context.connections.exec(
    wrapperCommand({ nonce, cwd: params.cwd, mergeStderr: false, exec }),
  );
  if (!opened.ok) return opened;
  const { channel } = opened;
  channel.on('error', () => {});
  const exited = watchExit(channel);

  channel.write(preamble.text);
  const started = await readStartStatus(channel, nonce, context.startTimeoutMs);
  if (started.skipped !== '') {
    context.onWarn('skipped output the host printed before the command started', {
      host: context.name,
      output: started.skipped.slice(0, 2_000),
    });
  }
  const { status } = started;
  if (status.kind === 'started') {
    return { ok: true, process: new SshRemoteProcess(context, channel, status.pid, started.rest, exited) };
  }

  const stderr = await drainStderr(channel, exited);
  const detail = stderr === '' ? '' : `: ${stderr}`;
  switch (status.kind) {
    case 'bad_cwd':
      return {
        ok: false,
        reason: 'bad_cwd',
        message: `ssh ${context.name}: working directory ${params.cwd} cannot be entered${detail}`,
      };
    case 'no_env':
      return {
        ok: false,
        reason: 'failed',
        message: `ssh ${context.name}: the environment was not received${detail}`,
      };
    case 'none':
      return { ok: false, reason: 'failed', message: `ssh ${context.name}: ${status.why}${detail}` };
  }
}

class SshRemoteProcess implements RemoteProcess {
  readonly stdin: Writable;
  readonly stdout: PassThrough;
  readonly stderr: NodeJS.ReadableStream;

  constructor(
    private readonly context: LaunchContext,
    channel: ClientChannel,
    readonly pid: number,
    rest: Buffer,
    readonly exited: Promise<RemoteExit>,
  ) {
    this.stdout = new PassThrough();
    if (rest.length > 0) this.stdout.write(rest);
    channel.pipe(this.stdout);
    this.stderr = channel.stderr;
    this.stdin = channelInput(channel);
  }

  terminateGroup(graceMs: number): Promise<void> {
    return terminateRemoteGroup(this.context.connections, this.pid, graceMs);
  }

  killGroup(): Promise<void> {
    return killRemoteGroup(this.context.connections, this.pid);
  }
}

/** Resolves with the exit status, or `connectionLost` when the channel closes without one. */
function watchExit(channel: ClientChannel): Promise<RemoteExit> {
  return new Promise((resolve) => {
    channel.once('exit', (code: number | null, signal?: string) => {
      resolve({ exitCode: code ?? null, signal: signal ?? null, connectionLost: false });
    });
    channel.once('close', () => resolve({ exitCode: null, signal: null, connectionLost: true }));
  });
}

/** The channel's write side as a plain Writable; writes after the channel closed are dropped. */
function channelInput(channel: ClientChannel): Writable {
  let closed = false;
  let waiting: (() => void) | null = null;
  channel.once('close', () => {
    closed = true;
    waiting?.();
    waiting = null;
  });
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (closed) return callback();
      if (channel.write(chunk)) return callback();
      waiting = () => callback();
      channel.once('drain', () => {
        const resume = waiting;
        waiting = null;
        resume?.();
      });
    },
    final(callback) {
      if (!closed) channel.end();
      callback();
    },
  });
}

/** The stderr of a command that failed to start, read until it ends (bounded). */
async function drainStderr(channel: ClientChannel, exited: Promise<RemoteExit>): Promise<string> {
  const chunks: Buffer[] = [];
  channel.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  channel.resume();
  channel.end();
  const closed = new Promise<void>((resolve) => channel.once('close', resolve));
  await Promise.race([
    exited.then(() => closed),
    new Promise((resolve) => setTimeout(resolve, FAILED_START_DRAIN_MS)),
  ]);
  channel.close();
  return Buffer.concat(chunks).toString('utf8').trim().slice(0, 2_000);
}
