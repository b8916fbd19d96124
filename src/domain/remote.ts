/**
 * A host that runs the orchestrator's commands somewhere else (an SSH worker).
 * The agent core launches agents through it and the workspace layer creates,
 * hooks and removes workspaces through it; neither knows how the host is reached.
 * Everything that goes to the host travels as data the host side quotes or reads:
 * the environment is sent over the command's standard input, never in a command
 * line that other users of the host could read.
 */

/** How a remote command ended. */
export interface RemoteExit {
  /** Exit status, null when the command was killed by a signal or the status is unknown. */
  exitCode: number | null;
  /** Signal name such as "SIGTERM", null when none. */
  signal: string | null;
  /** True when the connection dropped before the command reported its status. */
  connectionLost: boolean;
}

/** Why a remote command could not be started. */
export type RemoteFailureReason =
  /** The host could not be reached or refused us (connect, key, host key, auth). */
  | 'unreachable'
  /** The working directory does not exist on the host or cannot be entered. */
  | 'bad_cwd'
  /** Anything else (channel refused, wrapper failed). */
  | 'failed';

export type RemoteFailure = { ok: false; reason: RemoteFailureReason; message: string };

export interface RemoteLaunchParams {
  /** Absolute working directory on the host. */
  cwd: string;
  /** Program as a shell fragment, kept verbatim (the host's PATH resolves it); e.g. `codex app-server`. */
  command: string;
  /** Arguments, each quoted for the host's shell. */
  args: readonly string[];
  /** Variables set for the command, sent over standard input before anything else. */
  env: Readonly<Record<string, string>>;
}

/** A command running on a host as the leader of its own process group. */
export interface RemoteProcess {
  /** Its pid on the host, which is also its process-group id there. */
  readonly pid: number;
  /** The command's standard input (after the environment preamble was consumed). */
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: NodeJS.ReadableStream;
  readonly stderr: NodeJS.ReadableStream;
  /** Resolves when the command ends or the connection drops. Never rejects. */
  readonly exited: Promise<RemoteExit>;
  /** SIGTERM (and SIGCONT) to the whole remote group, SIGKILL after `graceMs` if any of it lives. */
  terminateGroup(graceMs: number): Promise<void>;
  /** SIGKILL to the whole remote group; resolves once sent (or when the host is unreachable). */
  killGroup(): Promise<void>;
}

/** Options of a one-off script run. */
export interface RemoteScriptParams {
  /** POSIX sh script text; it runs as `sh -c <script>` with `cwd` as its working directory. */
  script: string;
  /** Absolute working directory on the host; null for the login directory. */
  cwd: string | null;
  env: Readonly<Record<string, string>>;
  /** The script's process group is killed when it runs longer; 0 for no limit. */
  timeoutMs: number;
  /** Aborting kills the script's process group. */
  signal?: AbortSignal;
  /** Combined stdout and stderr kept, in bytes (the head is kept). */
  maxOutputBytes?: number;
}

export interface RemoteScriptResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Stdout and stderr interleaved as they arrived, cut at `maxOutputBytes`. */
  output: string;
  durationMs: number;
  /** True when the connection dropped before the script reported its status (it may have done part of its work). */
  connectionLost: boolean;
}

/** One configured host, reached over one reused connection. */
export interface RemoteHost {
  /** The host as configured (`user@host:port`, user and port optional); used in logs, hooks and metrics. */
  readonly name: string;
  /** Connects if needed; a value saying whether the host is reachable now. */
  probe(): Promise<{ ok: true } | RemoteFailure>;
  /** Starts a long-running command (an agent) in `cwd`. */
  launch(params: RemoteLaunchParams): Promise<{ ok: true; process: RemoteProcess } | RemoteFailure>;
  /** Runs a script to completion (hooks, workspace creation and removal); what it left in its group is killed. */
  run(params: RemoteScriptParams): Promise<{ ok: true; result: RemoteScriptResult } | RemoteFailure>;
  /**
   * A port on the host's loopback whose connections reach `localPort` on this machine's
   * loopback (how an agent there reaches the tool server); the same port while it lasts.
   */
  forwardToLocal(localPort: number): Promise<{ ok: true; remotePort: number } | RemoteFailure>;
}
