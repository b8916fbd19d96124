/**
 * A fake model provider on 127.0.0.1 for driving real coding-agent CLIs in tests.
 * The server itself knows no provider: it records every request, answers `HEAD`
 * probes, and hands each request to the first dialect whose route matches. A
 * dialect (one file beside this one per wire format) turns a scripted reply into
 * a response: JSON with a status, a server-sent-event stream (optionally slow, or
 * held open part way), or no answer at all. Held streams are ended when the
 * server closes, so a test never leaks a socket.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  /** 1-based, in arrival order, across every dialect. */
  seq: number;
  method: string;
  /** Path with the query string. */
  path: string;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  bodyText: string;
  /** The body parsed as JSON, or null when it is empty or not JSON. */
  body: unknown;
  /** The dialect that answered, null when none matched. */
  dialect: string | null;
  atMs: number;
}

/** One server-sent event; `data` is serialised as JSON unless it is a string. */
export interface SseFrame {
  event?: string;
  data: unknown;
}

export type FakeResponse =
  | { type: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | {
      type: 'sse';
      frames: SseFrame[];
      /** Pause before each frame after the first (a slow stream). */
      frameDelayMs?: number;
      /** Write this many frames, then keep the connection open and silent (a stalled stream). */
      holdAfterFrames?: number;
      /** Line ending of the frames: `\n` by default; Google's API ends them with `\r\n`. */
      lineEnding?: '\n' | '\r\n';
      headers?: Record<string, string>;
    }
  /** Accept the request and never answer. */
  | { type: 'hang' };

/** A wire format: which requests it serves and how it answers them. */
export interface Dialect {
  name: string;
  matches(method: string, path: string): boolean;
  respond(request: RecordedRequest): FakeResponse;
}

/**
 * Replies a dialect hands out in order: a list (its last entry repeats once the
 * list is used up) or a function of the request and its 0-based index.
 */
export class ReplyScript<R> {
  #served = 0;
  constructor(private readonly source: readonly R[] | ((request: RecordedRequest, index: number) => R)) {
    if (Array.isArray(source) && source.length === 0) throw new Error('ReplyScript: the list is empty');
  }

  /** How many replies were handed out. */
  get served(): number {
    return this.#served;
  }

  next(request: RecordedRequest): R {
    const index = this.#served++;
    if (typeof this.source === 'function') return this.source(request, index);
    const list = this.source as readonly R[];
    return list[Math.min(index, list.length - 1)] as R;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class FakeModelServer {
  readonly requests: RecordedRequest[] = [];
  readonly #open = new Set<http.ServerResponse>();
  #waiters: (() => void)[] = [];

  private constructor(
    private readonly server: http.Server,
    private readonly dialects: readonly Dialect[],
  ) {}

  /** Starts a server on a free loopback port serving `dialects`, first match wins. */
  static async start(dialects: readonly Dialect[]): Promise<FakeModelServer> {
    let fake: FakeModelServer | null = null;
    const server = http.createServer((req, res) => {
      void fake?.handle(req, res);
    });
    fake = new FakeModelServer(server, dialects);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The requests a dialect answered. */
  requestsTo(dialect: string): RecordedRequest[] {
    return this.requests.filter((r) => r.dialect === dialect);
  }

  /** Resolves once `predicate` holds for the recorded requests; rejects after `timeoutMs`. */
  waitFor(predicate: (requests: readonly RecordedRequest[]) => boolean, timeoutMs: number): Promise<void> {
    if (predicate(this.requests)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== check);
        reject(new Error(`fake model server: condition not met within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        if (!predicate(this.requests)) return;
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((w) => w !== check);
        resolve();
      };
      this.#waiters.push(check);
    });
  }

  /** Ends held and hanging responses, then stops listening. */
  async close(): Promise<void> {
    for (const res of this.#open) res.destroy();
    this.#open.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bodyText = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const dialect = this.dialects.find((d) => d.matches(method, path)) ?? null;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const recorded: RecordedRequest = {
      seq: this.requests.length + 1,
      method,
      path,
      headers,
      bodyText,
      body: parseJson(bodyText),
      dialect: dialect?.name ?? null,
      atMs: Date.now(),
    };
    this.requests.push(recorded);
    for (const waiter of [...this.#waiters]) waiter();

    if (dialect === null) {
      // Connectivity probes (HEAD /) get any 2xx; everything else is unknown here.
      if (method === 'HEAD') res.writeHead(200).end();
      else writeJson(res, 404, { error: `fake model server: no dialect serves ${method} ${path}` });
      return;
    }
    let response: FakeResponse;
    try {
      response = dialect.respond(recorded);
    } catch (error) {
      writeJson(res, 500, { error: `fake model server: the script threw: ${String(error)}` });
      return;
    }
    await this.send(res, response);
  }

  private async send(res: http.ServerResponse, response: FakeResponse): Promise<void> {
    switch (response.type) {
      case 'json':
        writeJson(res, response.status, response.body, response.headers);
        return;
      case 'hang':
        this.hold(res);
        return;
      case 'sse': {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
          ...response.headers,
        });
        this.hold(res);
        const limit = response.holdAfterFrames ?? response.frames.length;
        for (const [i, frame] of response.frames.slice(0, limit).entries()) {
          if (i > 0 && (response.frameDelayMs ?? 0) > 0) await sleep(response.frameDelayMs ?? 0);
          if (res.destroyed) return;
          res.write(formatFrame(frame, response.lineEnding));
        }
        if (response.holdAfterFrames === undefined) {
          this.#open.delete(res);
          res.end();
        }
        return;
      }
    }
  }

  /** Keeps a response open until the client leaves or the server closes. */
  private hold(res: http.ServerResponse): void {
    this.#open.add(res);
    res.once('close', () => this.#open.delete(res));
  }
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function writeJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** One SSE frame: `event:` line when named, one `data:` line, blank line. */
export function formatFrame(frame: SseFrame, eol: '\n' | '\r\n' = '\n'): string {
  const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
  return `${frame.event === undefined ? '' : `event: ${frame.event}${eol}`}data: ${data}${eol}${eol}`;
}
