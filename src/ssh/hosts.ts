/**
 * The registry of SSH hosts: one `SshHost` per configured `[user@]host[:port]` entry,
 * each with its own connections, so every agent, hook and kill aimed at one host
 * shares one login. Built once from the workflow's SSH options; `close()` on shutdown.
 */
import type {
  RemoteFailure,
  RemoteHost,
  RemoteLaunchParams,
  RemoteProcess,
  RemoteScriptParams,
  RemoteScriptResult,
} from '../domain/remote.js';
import { parseHostSpec } from '../workflow/host-spec.js';
import { type BackoffPolicy, DEFAULT_RECONNECT_BACKOFF } from './backoff.js';
import { DEFAULT_MAX_CHANNELS_PER_CONNECTION, HostConnections } from './connection.js';
import { type HostKeyPolicy, KnownHostsFile } from './host-keys.js';
import { type LaunchContext, launchRemote } from './launch.js';
import { runRemoteScript } from './script.js';

export interface SshOptions {
  /** Host key policy, as OpenSSH's StrictHostKeyChecking. */
  strictHostKeyChecking: HostKeyPolicy;
  /** The managed known_hosts file; created (0600, directory 0700) on its first write. */
  knownHostsFile: string;
  /** Private key file; null to rely on the agent alone. */
  identityFile: string | null;
  /** SSH agent socket (SSH_AUTH_SOCK); null for none. */
  agentSocket: string | null;
  /** Login name for entries without `user@`. */
  defaultUser: string;
  /** Bound on one connect (TCP, handshake and authentication), and on a command's start. */
  connectTimeoutMs: number;
  /** Keepalive interval; default 15 s. */
  keepaliveIntervalMs?: number;
  /** Unanswered keepalives before the connection counts as dropped; default 3. */
  keepaliveCountMax?: number;
  /** Wait after a failed connect, doubling per failure; default 1 s up to 60 s. */
  reconnectBackoff?: BackoffPolicy;
  /** Channels per connection before another connection is opened; default 10 (sshd's MaxSessions). */
  maxChannelsPerConnection?: number;
  /** Non-fatal events: a new host key recorded, a known_hosts line ignored, startup noise skipped. */
  onWarn?: (message: string, fields: Record<string, unknown>) => void;
}

export const DEFAULT_KEEPALIVE_INTERVAL_MS = 15_000;
export const DEFAULT_KEEPALIVE_COUNT_MAX = 3;

/** The configured SSH hosts, one cached `SshHost` per spec string. */
export class SshHosts {
  readonly #options: SshOptions;
  readonly #knownHosts: KnownHostsFile;
  readonly #hosts = new Map<string, SshHost>();

  constructor(options: SshOptions) {
    this.#options = options;
    this.#knownHosts = new KnownHostsFile(
      options.knownHostsFile,
      options.strictHostKeyChecking,
      options.onWarn,
    );
  }

  /** The host for `spec`; throws only for a spec `parseHostSpec` rejects (validation reports those first). */
  host(spec: string): SshHost {
    const cached = this.#hosts.get(spec);
    if (cached !== undefined) return cached;
    const parsed = parseHostSpec(spec);
    if (!parsed.ok) throw new Error(parsed.message);
    const options = this.#options;
    const connections = new HostConnections({
      name: spec,
      host: parsed.value.host,
      port: parsed.value.port,
      username: parsed.value.user ?? options.defaultUser,
      identityFile: options.identityFile,
      agentSocket: options.agentSocket,
      connectTimeoutMs: options.connectTimeoutMs,
      keepaliveIntervalMs: options.keepaliveIntervalMs ?? DEFAULT_KEEPALIVE_INTERVAL_MS,
      keepaliveCountMax: options.keepaliveCountMax ?? DEFAULT_KEEPALIVE_COUNT_MAX,
      backoff: options.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF,
      maxChannelsPerConnection: options.maxChannelsPerConnection ?? DEFAULT_MAX_CHANNELS_PER_CONNECTION,
      knownHosts: this.#knownHosts,
    });
    const host = new SshHost(spec, {
      name: spec,
      connections,
      startTimeoutMs: Math.max(options.connectTimeoutMs, MIN_START_TIMEOUT_MS),
      onWarn: options.onWarn ?? (() => {}),
    });
    this.#hosts.set(spec, host);
    return host;
  }

  /** Ends every connection of every host; further calls fail as unreachable. */
  async close(): Promise<void> {
    await Promise.all([...this.#hosts.values()].map((host) => host.close()));
  }
}

/** A command's start (env read, cd, pid line) may take this long even when connecting is fast. */
const MIN_START_TIMEOUT_MS = 10_000;

/** One host reached over its shared connections. */
export class SshHost implements RemoteHost {
  constructor(
    readonly name: string,
    private readonly context: LaunchContext,
  ) {}

  /** Connect attempts that reached the network (tests and diagnostics; fast failures do not count). */
  get connectAttempts(): number {
    return this.context.connections.connectAttempts;
  }

  /** Connections open right now. */
  get connectionCount(): number {
    return this.context.connections.connectionCount;
  }

  probe(): Promise<{ ok: true } | RemoteFailure> {
    return this.context.connections.probe();
  }

  launch(params: RemoteLaunchParams): Promise<{ ok: true; process: RemoteProcess } | RemoteFailure> {
    return launchRemote(this.context, params);
  }

  run(params: RemoteScriptParams): Promise<{ ok: true; result: RemoteScriptResult } | RemoteFailure> {
    return runRemoteScript(this.context, params);
  }

  forwardToLocal(localPort: number): Promise<{ ok: true; remotePort: number } | RemoteFailure> {
    return this.context.connections.forward(localPort);
  }

  /** Ends this host's connections (the wrappers' watchers then kill what still runs). */
  close(): Promise<void> {
    return this.context.connections.close();
  }
}
