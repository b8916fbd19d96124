/**
 * The tool endpoint's listener: node:http on 127.0.0.1, apart from the API server.
 *
 * The API server may listen on every address for a dashboard and has no authentication of
 * its own; the tool endpoint carries session tokens, so it binds loopback only, always. Local
 * sessions reach it through `orchestrator mcp-server`, remote ones through an SSH forward
 * that ends on this machine's loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { ToolSessions } from './sessions.js';
import { TOOL_ENDPOINT_PATH } from './sessions.js';

/** Largest request body accepted; a tool call is a few kilobytes. */
export const MAX_TOOL_REQUEST_BYTES = 1024 * 1024;

export interface ToolEndpoint {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
  /** Stops listening and ends open connections. Idempotent. */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 (`port` 0 = any free port) and serves `sessions`. */
export async function listenToolEndpoint(sessions: ToolSessions, port = 0): Promise<ToolEndpoint> {
  const server = http.createServer((req, res) => {
    serve(sessions, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(error instanceof Error ? error.message : String(error));
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${bound}${TOOL_ENDPOINT_PATH}`,
    port: bound,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

async function serve(
  sessions: ToolSessions,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const body = req.method === 'GET' || req.method === 'HEAD' ? null : await readBody(req);
  if (body === 'too_large') {
    res.writeHead(413, { 'content-type': 'text/plain' }).end('request body too large');
    return;
  }
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    body: body === null ? null : new Uint8Array(body),
    signal: abort.signal,
  });
  const response = await sessions.fetch(request);
  const answerHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    answerHeaders[name] = value;
  });
  res.writeHead(response.status, answerHeaders);
  if (response.body === null) {
    res.end();
    return;
  }
  // Streamed as it comes: an event-stream answer must not wait for its end.
  Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res);
}

async function readBody(req: http.IncomingMessage): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_TOOL_REQUEST_BYTES) return 'too_large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
