/**
 * The server-sent event stream behind `/api/v1/events`. Each client subscribes to the
 * orchestrator's observations and gets the whole state again when something changed.
 * Two traps: observations arrive in bursts (a token event per stream line) and in the
 * middle of the owner's own update, so a push is never built inside the observer; it is
 * deferred to a timer and coalesced to at most one per push interval. And a client that
 * stops reading must not make the server buffer without bound: past a limit it is dropped.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../orchestrator/ports.js';
import type { ServerSources } from './ports.js';

/** What the browser waits before reconnecting a dropped stream. */
const RECONNECT_MS = 2_000;
/** Bytes a client may leave unread before it is dropped. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface EventStreamOptions {
  subscribe: ServerSources['subscribe'];
  /** The state document, or null when it cannot be built right now (the push is skipped). */
  stateJson(): string | null;
  /** The `{ runs }` document, or null when it cannot be built right now. */
  runsJson(): string | null;
  /** At most one state push per this many ms. */
  pushIntervalMs: number;
  /** A `: ping` comment every this many ms keeps proxies and the browser from timing out. */
  pingIntervalMs: number;
  log: Logger;
}

interface Client {
  res: ServerResponse;
  timer: NodeJS.Timeout | null;
  lastPushMs: number;
  runsDirty: boolean;
  close(): void;
}

export class EventStreams {
  readonly #clients = new Set<Client>();

  constructor(private readonly options: EventStreamOptions) {}

  /** Clients connected now. */
  get size(): number {
    return this.#clients.size;
  }

  /** Turns the response into an event stream; it lives until the client or the server closes it. */
  open(req: IncomingMessage, res: ServerResponse): void {
    // The server's request and keep-alive timeouts are for ordinary requests, not for this one.
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    req.socket.setKeepAlive(true);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const { subscribe, pingIntervalMs } = this.options;
    let unsubscribe: () => void = () => undefined;
    const ping = setInterval(() => this.#write(client, ': ping\n\n'), pingIntervalMs);
    const client: Client = {
      res,
      timer: null,
      lastPushMs: performance.now(),
      runsDirty: false,
      close: () => {
        if (!this.#clients.delete(client)) return;
        clearInterval(ping);
        if (client.timer !== null) clearTimeout(client.timer);
        unsubscribe();
      },
    };
    this.#clients.add(client);
    res.on('close', client.close);
    this.#write(client, `retry: ${RECONNECT_MS}\n\n`);
    this.#push(client, true);
    if (!this.#clients.has(client)) return;
    unsubscribe = subscribe((observation) => {
      // A run row appears at dispatch and is completed at exit: both change the history.
      if (observation.type === 'worker_exited' || observation.type === 'dispatched') client.runsDirty = true;
      this.#schedule(client);
    });
  }

  /** Ends every stream (server shutdown). */
  closeAll(): void {
    for (const client of [...this.#clients]) {
      client.close();
      client.res.end();
    }
  }

  #schedule(client: Client): void {
    if (client.timer !== null) return;
    const waitMs = Math.max(0, client.lastPushMs + this.options.pushIntervalMs - performance.now());
    client.timer = setTimeout(() => {
      client.timer = null;
      this.#push(client, client.runsDirty);
    }, waitMs);
  }

  #push(client: Client, withRuns: boolean): void {
    client.lastPushMs = performance.now();
    const state = this.options.stateJson();
    if (state !== null) this.#write(client, `event: state\ndata: ${state}\n\n`);
    if (!withRuns) return;
    const runs = this.options.runsJson();
    if (runs === null) return;
    client.runsDirty = false;
    this.#write(client, `event: runs\ndata: ${runs}\n\n`);
  }

  #write(client: Client, text: string): void {
    const { res } = client;
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      this.options.log.warn(
        { buffered_bytes: res.writableLength },
        'event stream client is not reading; dropped',
      );
      client.close();
      res.destroy();
      return;
    }
    res.write(text);
  }
}
