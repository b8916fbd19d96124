/**
 * The service's HTTP server (node:http): where it listens, its timeouts and how it stops.
 * The port rules are the trap. The default port is a convenience, so finding it busy (a
 * second instance on the same machine) is a warning and the service runs on without a
 * server; a port the operator asked for is a promise, so finding it busy is a start-up
 * error. Port 0 means "no server", not "any port".
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../orchestrator/ports.js';
import { isLoopbackAddress } from '../workflow/server-hosts.js';
import type { ServerSources } from './ports.js';
import { Api } from './routes.js';

export { isLoopbackAddress } from '../workflow/server-hosts.js';

/** The port the service listens on when neither the workflow nor the CLI names one. */
export const DEFAULT_PORT = 7678;
export const DEFAULT_HOST = '127.0.0.1';
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 60_000;
const SSE_PING_MS = 15_000;
const SSE_PUSH_INTERVAL_MS = 250;

export interface StartOptions {
  host: string;
  /** 0 disables the server. */
  port: number;
  /** True when the operator chose the port (workflow `server.port` or `--port`): busy is then an error. */
  portExplicit: boolean;
  /** `server.allowed_hosts`: host names requests may name besides loopback ones ([] when not set). */
  allowedHosts?: readonly string[];
  log: Logger;
  /** The dashboard page for a CSP nonce. */
  dashboard: (nonce: string) => string;
  /** Headers and request timeout in ms (default 10 s); tests shorten it. */
  requestTimeoutMs?: number;
  /** Event-stream keep-alive comment interval in ms (default 15 s); tests shorten it. */
  ssePingMs?: number;
}

export interface RunningServer {
  /** `http://<host>:<port>`. */
  url: string;
  /** The port actually bound. */
  port: number;
  /** Ends the event streams, closes every connection and stops listening. Idempotent. */
  close(): Promise<void>;
}

export type StartResult =
  | {
      ok: true;
      /** null when the server is disabled (port 0) or the default port was busy (warned). */
      server: RunningServer | null;
    }
  | {
      ok: false;
      code: 'server_port_in_use' | 'server_listen_failed';
      /** Names host:port. */
      message: string;
    };

/** Starts listening; resolves once bound (or once it is clear the server will not run). */
export async function startServer(sources: ServerSources, options: StartOptions): Promise<StartResult> {
  const { host, port, log } = options;
  if (port === 0) {
    log.info({}, 'http server disabled (server.port is 0)');
    return { ok: true, server: null };
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const loopback = isLoopbackAddress(host);
  const allowedHosts = options.allowedHosts ?? [];
  const api = new Api({
    sources,
    log,
    dashboard: options.dashboard,
    // Bound to loopback, only loopback names are answered; elsewhere the operator's list decides.
    allowedHosts: loopback || allowedHosts.length > 0 ? new Set(allowedHosts) : null,
    pushIntervalMs: SSE_PUSH_INTERVAL_MS,
    pingIntervalMs: options.ssePingMs ?? SSE_PING_MS,
  });
  const server = http.createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
      // How often the two timeouts above are enforced (Node's default, 30 s, would let them run long).
      connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(requestTimeoutMs / 4))),
    },
    (req, res) => api.handle(req, res),
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;

  const failure = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    server.once('error', resolve);
    server.listen({ host, port }, () => {
      server.off('error', resolve);
      resolve(null);
    });
  });
  const addr = `${bracket(host)}:${port}`;
  if (failure !== null) {
    api.close();
    if (failure.code === 'EADDRINUSE') {
      if (!options.portExplicit) {
        log.warn(
          { addr, port },
          'http server not started: the default port is in use (set server.port or --port to choose one); running without it',
        );
        return { ok: true, server: null };
      }
      return {
        ok: false,
        code: 'server_port_in_use',
        message: `cannot listen on ${addr}: the port is already in use; choose another with --port N, or --port 0 to run without the HTTP server`,
      };
    }
    return {
      ok: false,
      code: 'server_listen_failed',
      message: `cannot listen on ${addr}: ${failure.message}`,
    };
  }

  server.on('error', (error) => log.error({ error: error.message }, 'http server error'));
  const bound = (server.address() as AddressInfo).port;
  const url = `http://${bracket(host)}:${bound}`;
  log.info({ addr: url }, 'http server listening');
  if (!loopback) {
    log.warn(
      { addr: url, allowed_hosts: allowedHosts },
      allowedHosts.length === 0
        ? 'http server reachable from other machines with no authentication, answering any Host name: set server.allowed_hosts, or bind 127.0.0.1 behind a proxy'
        : 'http server reachable from other machines with no authentication; requests naming other hosts than server.allowed_hosts are refused',
    );
  }
  let closing: Promise<void> | null = null;
  return {
    ok: true,
    server: {
      url,
      port: bound,
      close: () => {
        closing ??= new Promise<void>((resolve) => {
          api.close();
          server.close(() => resolve());
          server.closeAllConnections();
        });
        return closing;
      },
    },
  };
}

function bracket(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
