/**
 * An agent process on a remote host, seen through the same `AgentProcess` shape
 * as a local one, so both session skeletons run it unchanged. The host starts it
 * as the leader of its own process group; stopping and reaping act on that remote
 * group. Descendants that leave the group cannot be tracked from here (there is
 * no remote `/proc` walk): the group kill is what reaps.
 */
import type { Readable, Writable } from 'node:stream';
import type { RemoteHost, RemoteProcess } from '../../../domain/remote.js';
import type { ProcessExit } from './exit.js';
import { DEFAULT_MAX_LINE_BYTES, type LineResult, splitLines } from './lines.js';
import type { AgentProcess, Leftovers, SpawnAgentProcessParams, SpawnResult } from './spawn.js';
import { BoundedStderr } from './stderr.js';

/** Starts an agent on `host` in `params.cwd` (a path on the host); never throws for a failure to start. */
export async function startRemoteAgentProcess(
  host: RemoteHost,
  params: SpawnAgentProcessParams,
): Promise<SpawnResult> {
  let launched: Awaited<ReturnType<RemoteHost['launch']>>;
  try {
    launched = await host.launch({
      cwd: params.cwd,
      command: params.command,
      args: params.args,
      env: params.env,
    });
  } catch (error) {
    return { ok: false, code: 'spawn_failed', message: `cannot start on ${host.name}: ${String(error)}` };
  }
  if (!launched.ok) {
    const code =
      launched.reason === 'unreachable'
        ? 'unreachable'
        : launched.reason === 'bad_cwd'
          ? 'bad_cwd'
          : 'spawn_failed';
    return { ok: false, code, message: `${host.name}: ${launched.message}` };
  }
  return { ok: true, process: new RemoteAgentProcess(host, launched.process, params) };
}

class RemoteAgentProcess implements AgentProcess {
  readonly pid: number;
  readonly pgid: number;
  readonly lines: AsyncIterable<LineResult>;
  readonly stderr: BoundedStderr;
  readonly input: Writable | null;
  readonly exited: Promise<ProcessExit>;
  private ended = false;

  constructor(
    host: RemoteHost,
    private readonly remote: RemoteProcess,
    params: SpawnAgentProcessParams,
  ) {
    this.pid = remote.pid;
    this.pgid = remote.pid;
    // The channel's streams are Node streams (ssh2 channels are duplexes).
    const stdin = remote.stdin as unknown as Writable;
    stdin.on('error', () => {});
    this.input = null;
    if (params.stdin === 'pipe') this.input = stdin;
    else if (params.stdin === 'ignore') stdin.end();
    else stdin.end(params.stdin.text);
    const stdout = remote.stdout as unknown as Readable;
    stdout.on('error', () => {});
    this.stderr = new BoundedStderr(params.stderr).attach(remote.stderr as unknown as Readable);
    this.lines = splitLines(stdout, { maxLineBytes: params.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    this.exited = remote.exited.then((exit) => {
      this.ended = true;
      if (!exit.connectionLost) return { exitCode: exit.exitCode, signal: exit.signal };
      // A lost connection says nothing of the agent's own end; report it as a port failure.
      this.stderr.push(`[orchestrator: the connection to ${host.name} was lost]\n`);
      return { exitCode: null, signal: null };
    });
  }

  /** The remote group is only known alive until the agent ends; the reap then kills what is left. */
  groupAlive(): boolean {
    return !this.ended;
  }

  killGroup(): void {
    void this.remote.killGroup();
  }

  terminateGroup(graceMs: number): Promise<void> {
    return this.remote.terminateGroup(graceMs);
  }

  trackLeftovers(): Leftovers {
    const remote = this.remote;
    return {
      sample: () => undefined,
      sampleRecent: () => undefined,
      stop: () => undefined,
      reap: () => remote.killGroup(),
    };
  }
}
