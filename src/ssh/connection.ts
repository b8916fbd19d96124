/**
 * The SSH connections to one host. Every channel (agent, hook, kill) rides a shared,
 * lazily made connection, because a handshake per command would cost a round trip
 * storm and one sshd login per hook. Three traps shape it:
 * - sshd allows only `MaxSessions` (default 10) channels per connection, and agents hold
 *   theirs for hours: when every connection is full, another connection is opened (and
 *   closed again once idle) rather than queueing behind an agent that never finishes.
 * - A dead host must not cost every caller a full connect timeout: after a failed
 *   connect, calls fail at once until the backoff window passes, and concurrent callers
 *   share the one attempt in flight.
 * - A dropped connection is noticed by keepalives and replaced on the next call; the
 *   channels it carried end with `connectionLost`.
 * One port on the host's loopback may be forwarded back to a port here (agents reach the
 * tool server through it). It rides the first connection, which is never closed as idle;
 * when that connection drops the forward is made again on the next one, on the same
 * remote port when the host still has it free, so sessions already told the port keep it.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import type * as Ssh2 from 'ssh2';
import type { ClientChannel, ConnectConfig } from 'ssh2';
import type { RemoteFailure } from '../domain/remote.js';
import {
  afterFailure,
  type BackoffPolicy,
  type BackoffState,
  blockedMessage,
  FRESH_BACKOFF,
} from './backoff.js';
import { type KnownHostsFile, preferredHostKeyAlgorithms } from './host-keys.js';

const requireModule = createRequire(import.meta.url);
let ssh2Module: typeof Ssh2 | null = null;
/**
 * ssh2, loaded on first use: a service without SSH hosts never opens a connection, and ssh2
 * costs 16 MB of resident memory as soon as it loads (its WebAssembly poly1305 reserves its
 * memory), a sixth of the idle service (docs/performance.md, codex-workload).
 */
function ssh2(): typeof Ssh2 {
  ssh2Module ??= requireModule('ssh2') as typeof Ssh2;
  return ssh2Module;
}

/** sshd's default `MaxSessions`: channels one connection may carry at once. */
export const DEFAULT_MAX_CHANNELS_PER_CONNECTION = 10;

export interface ConnectionSettings {
  /** The host as configured, for messages. */
  name: string;
  host: string;
  port: number;
  username: string;
  /** Private key file (OpenSSH or PEM, without passphrase); null when only the agent is used. */
  identityFile: string | null;
  /** SSH agent socket (SSH_AUTH_SOCK); null for none. */
  agentSocket: string | null;
  connectTimeoutMs: number;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
  backoff: BackoffPolicy;
  maxChannelsPerConnection: number;
  knownHosts: KnownHostsFile;
}

export type ExecResult = { ok: true; channel: ClientChannel } | RemoteFailure;

/** A port on the host's loopback whose connections reach a port on this machine's. */
export type ForwardResult = { ok: true; remotePort: number } | RemoteFailure;

/** One ssh2 client and the channels it carries. */
interface Connection {
  client: Ssh2.Client;
  channels: number;
  closed: boolean;
  /** Resolves once the client has closed. */
  gone: Promise<void>;
  /** The forward this connection carries: its port on the host and the local port it reaches. */
  forward: { remotePort: number; localPort: number } | null;
}

/** The connections to one host, with the reconnect backoff shared by all of them. */
export class HostConnections {
  readonly #settings: ConnectionSettings;
  readonly #live: Connection[] = [];
  #connecting: Promise<{ ok: true } | RemoteFailure> | null = null;
  #backoff: BackoffState = FRESH_BACKOFF;
  #closed = false;
  #attempts = 0;
  /** The local port the forward should reach, once asked for; kept so a drop can make it again. */
  #forwardTo: number | null = null;
  /** The remote port last bound, tried first when the forward is made again. */
  #lastRemotePort = 0;
  #forwarding: Promise<ForwardResult> | null = null;

  constructor(settings: ConnectionSettings) {
    this.#settings = settings;
  }

  /** Connect attempts that reached the network so far (for tests and diagnostics). */
  get connectAttempts(): number {
    return this.#attempts;
  }

  /** Open connections right now. */
  get connectionCount(): number {
    return this.#live.length;
  }

  /** Connects when no connection is open; a value saying whether the host is reachable. */
  async probe(): Promise<{ ok: true } | RemoteFailure> {
    if (this.#closed) return this.#closedFailure();
    if (this.#live.length > 0) return { ok: true };
    return this.#connect();
  }

  /** Runs `command` on a new channel (no pty); the channel's slot is freed when it closes. */
  async exec(command: string): Promise<ExecResult> {
    for (;;) {
      if (this.#closed) return this.#closedFailure();
      const connection = this.#live.find((c) => c.channels < this.#settings.maxChannelsPerConnection);
      if (connection !== undefined) {
        // Taken before the first await, so concurrent callers never overfill a connection.
        connection.channels += 1;
        return this.#openChannel(connection, command);
      }
      const connected = await this.#connect();
      if (!connected.ok) return connected;
    }
  }

  /**
   * A port on the host's loopback (127.0.0.1) forwarded to `localPort` on this machine's: the
   * same port for every caller while its connection lives; made on the first connection.
   */
  forward(localPort: number): Promise<ForwardResult> {
    if (this.#closed) return Promise.resolve(this.#closedFailure());
    this.#forwardTo = localPort;
    const carrier = this.#live.find((c) => c.forward !== null);
    if (carrier?.forward != null) {
      // Connections arriving from now on go to the port asked for last.
      carrier.forward.localPort = localPort;
      return Promise.resolve({ ok: true, remotePort: carrier.forward.remotePort });
    }
    if (this.#forwarding === null) {
      this.#forwarding = this.#openForward().finally(() => {
        this.#forwarding = null;
      });
    }
    return this.#forwarding;
  }

  async #openForward(): Promise<ForwardResult> {
    const connected = await this.probe();
    if (!connected.ok) return connected;
    const connection = this.#live[0];
    if (connection === undefined)
      return this.#unreachable('the connection closed before the forward was made');
    const previous = this.#lastRemotePort;
    let bound = await bindRemotePort(connection.client, previous);
    if (!bound.ok && previous !== 0) bound = await bindRemotePort(connection.client, 0);
    if (!bound.ok) {
      return {
        ok: false,
        reason: 'failed',
        message: `ssh ${this.#settings.name}: cannot forward a port on the host (AllowTcpForwarding?): ${bound.message}`,
      };
    }
    if (connection.closed) return this.#unreachable('the connection closed while the forward was made');
    this.#lastRemotePort = bound.port;
    connection.forward = { remotePort: bound.port, localPort: this.#forwardTo ?? 0 };
    return { ok: true, remotePort: bound.port };
  }

  /** Ends every connection and refuses further use; resolves once all have closed. */
  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#connecting;
    if (pending !== null) await pending;
    const all = this.#live.splice(0);
    for (const connection of all) connection.client.end();
    await Promise.all(all.map((connection) => withTimeout(connection.gone, 5_000)));
    for (const connection of all) if (!connection.closed) connection.client.destroy();
  }

  #openChannel(connection: Connection, command: string): Promise<ExecResult> {
    return new Promise((resolve) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        connection.channels -= 1;
        this.#closeIfIdleExtra(connection);
      };
      try {
        connection.client.exec(command, (error, channel) => {
          if (error) {
            release();
            resolve({
              ok: false,
              reason: connection.closed ? 'unreachable' : 'failed',
              message: `${this.#settings.name}: cannot open a channel: ${error.message}`,
            });
            return;
          }
          channel.once('close', release);
          resolve({ ok: true, channel });
        });
      } catch (error) {
        // ssh2 throws when the client is no longer connected.
        release();
        resolve({
          ok: false,
          reason: 'unreachable',
          message: `${this.#settings.name}: cannot open a channel: ${errorMessage(error)}`,
        });
      }
    });
  }

  /** A second or later connection with nothing on it is closed; the first one stays for reuse. */
  #closeIfIdleExtra(connection: Connection): void {
    if (connection.channels > 0 || connection.closed || connection.forward !== null) return;
    if (this.#live.indexOf(connection) <= 0) return;
    this.#drop(connection);
    connection.client.end();
  }

  #drop(connection: Connection): void {
    const index = this.#live.indexOf(connection);
    if (index !== -1) this.#live.splice(index, 1);
  }

  #connect(): Promise<{ ok: true } | RemoteFailure> {
    if (this.#connecting !== null) return this.#connecting;
    const blocked = blockedMessage(this.#backoff, Date.now());
    if (blocked !== null) return Promise.resolve(this.#unreachable(blocked));
    this.#connecting = this.#attempt().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #attempt(): Promise<{ ok: true } | RemoteFailure> {
    const settings = this.#settings;
    const auth = await authConfig(settings);
    if (!auth.ok) return this.#unreachable(auth.message);
    const knownTypes = await settings.knownHosts.knownKeyTypes(settings.host, settings.port).catch(() => []);

    this.#attempts += 1;
    const client = new (ssh2().Client)();
    let hostKeyRefusal: string | null = null;
    const config: ConnectConfig = {
      host: settings.host,
      port: settings.port,
      username: settings.username,
      ...auth.config,
      readyTimeout: settings.connectTimeoutMs,
      keepaliveInterval: settings.keepaliveIntervalMs,
      keepaliveCountMax: settings.keepaliveCountMax,
      algorithms: { serverHostKey: preferredHostKeyAlgorithms(knownTypes) as Ssh2.ServerHostKeyAlgorithm[] },
      hostVerifier: (key: Buffer, verify: (valid: boolean) => void) => {
        settings.knownHosts.verify(settings.host, settings.port, key).then(
          (result) => {
            if (!result.ok) hostKeyRefusal = result.message;
            verify(result.ok);
          },
          (error: unknown) => {
            hostKeyRefusal = `host key check failed: ${errorMessage(error)}`;
            verify(false);
          },
        );
      },
    };

    const outcome = await new Promise<{ ok: true; connection: Connection } | { ok: false; message: string }>(
      (resolve) => {
        let settled = false;
        let lastError: string | null = null;
        let markGone: () => void = () => {};
        const connection: Connection = {
          client,
          channels: 0,
          closed: false,
          gone: new Promise<void>((done) => {
            markGone = done;
          }),
          forward: null,
        };
        client.on('tcp connection', (info, accept, reject) => {
          const target = connection.forward;
          if (target === null || info.destPort !== target.remotePort) {
            reject();
            return;
          }
          pipeToLocal(accept(), target.localPort);
        });
        // Without a listener an 'error' event would crash the process; errors after ready end in 'close'.
        client.on('error', (error: Error & { level?: string }) => {
          lastError = describeConnectError(error);
        });
        client.once('ready', () => {
          settled = true;
          resolve({ ok: true, connection });
        });
        client.once('close', () => {
          connection.closed = true;
          this.#drop(connection);
          markGone();
          // Sessions on the other connections still use the forward: make it again, on the same port if free.
          if (
            connection.forward !== null &&
            !this.#closed &&
            this.#live.length > 0 &&
            this.#forwardTo !== null
          ) {
            void this.forward(this.#forwardTo);
          }
          if (!settled) {
            settled = true;
            resolve({
              ok: false,
              message: hostKeyRefusal ?? lastError ?? 'connection closed during the handshake',
            });
          }
        });
        try {
          client.connect(config);
        } catch (error) {
          settled = true;
          resolve({ ok: false, message: errorMessage(error) });
        }
      },
    );

    if (!outcome.ok) {
      this.#backoff = afterFailure(this.#backoff, outcome.message, Date.now(), settings.backoff);
      return this.#unreachable(`cannot connect: ${outcome.message}`);
    }
    this.#backoff = FRESH_BACKOFF;
    if (this.#closed) {
      outcome.connection.client.end();
      return this.#closedFailure();
    }
    this.#live.push(outcome.connection);
    return { ok: true };
  }

  #unreachable(why: string): RemoteFailure {
    return { ok: false, reason: 'unreachable', message: `ssh ${this.#settings.name}: ${why}` };
  }

  #closedFailure(): RemoteFailure {
    return this.#unreachable('the SSH hosts were closed (the orchestrator is shutting down)');
  }
}

/** Asks the host to listen on its loopback at `port` (0 = any free one); the port bound. */
function bindRemotePort(
  client: Ssh2.Client,
  port: number,
): Promise<{ ok: true; port: number } | { ok: false; message: string }> {
  return new Promise((resolve) => {
    try {
      client.forwardIn('127.0.0.1', port, (error, bound) => {
        if (error) resolve({ ok: false, message: error.message });
        else resolve({ ok: true, port: bound });
      });
    } catch (error) {
      resolve({ ok: false, message: errorMessage(error) });
    }
  });
}

/** Joins a forwarded channel to a new connection to `port` on this machine's loopback. */
function pipeToLocal(channel: ClientChannel, port: number): void {
  const socket = net.connect(port, '127.0.0.1');
  const end = () => {
    socket.destroy();
    channel.destroy();
  };
  socket.once('error', end);
  channel.once('error', end);
  socket.once('close', end);
  channel.once('close', end);
  channel.pipe(socket).pipe(channel);
}

/** The key source part of the connect config, or why there is none. */
async function authConfig(
  settings: ConnectionSettings,
): Promise<{ ok: true; config: Partial<ConnectConfig> } | { ok: false; message: string }> {
  if (settings.identityFile === null && settings.agentSocket === null) {
    return {
      ok: false,
      message: 'no SSH key source: set an identity file or run an SSH agent (SSH_AUTH_SOCK)',
    };
  }
  const config: Partial<ConnectConfig> = {};
  if (settings.agentSocket !== null) config.agent = settings.agentSocket;
  if (settings.identityFile !== null) {
    let key: Buffer;
    try {
      key = await readFile(settings.identityFile);
    } catch (error) {
      return {
        ok: false,
        message: `cannot read identity file ${settings.identityFile}: ${errorMessage(error)}`,
      };
    }
    const parsed = ssh2().utils.parseKey(key);
    if (parsed instanceof Error) {
      return {
        ok: false,
        message: `identity file ${settings.identityFile} is not a usable key: ${parsed.message}`,
      };
    }
    config.privateKey = key;
  }
  return { ok: true, config };
}

function describeConnectError(error: Error & { level?: string }): string {
  if (error.level === 'client-authentication') return `authentication failed (${error.message})`;
  if (error.level === 'client-timeout') return `timed out (${error.message})`;
  return error.message;
}

function withTimeout(promise: Promise<void>, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
