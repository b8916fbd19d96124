/**
 * The HTTP side every fake tracker shares: a server on 127.0.0.1 on a port of its own, a 500
 * (in the fake's own error shape) for a handler that throws, and a close that does not wait
 * for keep-alive connections a client left open.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export class LoopbackHttp {
  private server: Server | null = null;

  constructor(
    private readonly handle: Handler,
    /** The body of the 500 for a handler that threw, in the fake's error shape. */
    private readonly failureBody: (error: unknown) => unknown = (error) => ({ message: String(error) }),
  ) {}

  /** Listens on a free port of 127.0.0.1; resolves to `http://127.0.0.1:<port>`. */
  async start(): Promise<string> {
    const server = createServer((req, res) => {
      void this.handle(req, res).catch((error: unknown) => {
        if (res.headersSent) return;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.failureBody(error)));
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Stops listening and drops every open connection; idempotent. */
  async close(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The whole request body as text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
