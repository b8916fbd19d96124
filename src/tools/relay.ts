/**
 * `orchestrator mcp-server`: the stdio face of the tool endpoint. A runtime starts it as a
 * stdio MCP server; it forwards each JSON-RPC line to the running service's endpoint with the
 * session's token and writes the answers back, one per line.
 *
 * A relay rather than a second server: the tools, their scoping and their log live once, in
 * the service that owns the tracker, the store and the run, and a session ending there ends
 * every way in. The relay holds no tracker credential, only the session's token, given in its
 * environment (never in its arguments).
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** Where the relay finds the endpoint (set by the service in the runtime's environment). */
export const TOOL_URL_ENV = 'ORCHESTRATOR_TOOLS_URL';
/** The session's bearer token (likewise). */
export const TOOL_TOKEN_ENV = 'ORCHESTRATOR_TOOLS_TOKEN';

/** Longest line accepted from the runtime. */
export const MAX_RELAY_LINE_BYTES = 10 * 1024 * 1024;

export interface RelayOptions {
  url: string;
  token: string;
  input: Readable;
  output: Writable;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

type JsonRpcId = string | number | null;

/** Relays until `input` ends and every answer is written. */
export async function relayStdio(options: RelayOptions): Promise<void> {
  const send = options.fetch ?? fetch;
  const pending = new Set<Promise<void>>();
  // The version the runtime and the endpoint agreed on, sent with every later request as
  // streamable HTTP asks.
  let protocolVersion: string | null = null;
  const write = (message: unknown): void => {
    options.output.write(`${JSON.stringify(message)}\n`);
  };
  const forward = async (line: string): Promise<void> => {
    let message: { id?: JsonRpcId; method?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      write(rpcError(null, -32700, 'the line is not JSON'));
      return;
    }
    const id = message.id ?? null;
    const answers = message.id !== undefined && typeof message.method === 'string';
    let response: Response;
    try {
      response = await send(options.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(protocolVersion === null ? {} : { 'mcp-protocol-version': protocolVersion }),
        },
        body: line,
      });
    } catch (error) {
      if (answers) write(rpcError(id, -32603, `the tool endpoint is unreachable: ${describe(error)}`));
      return;
    }
    const text = await response.text();
    const messages = parseAnswer(response.headers.get('content-type') ?? '', text);
    if (!response.ok && messages.length === 0) {
      if (answers)
        write(rpcError(id, -32001, `the tool endpoint answered ${response.status}: ${text.slice(0, 200)}`));
      return;
    }
    for (const answer of messages) {
      const version = (answer as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (message.method === 'initialize' && typeof version === 'string') protocolVersion = version;
      // A refusal before dispatch (401) carries no id; the runtime needs its own back.
      const answered = answer as { id?: JsonRpcId; error?: unknown };
      if (answered.error !== undefined && answered.id === null && answers) write({ ...answered, id });
      else write(answer);
    }
  };
  const lines = createInterface({ input: options.input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    if (Buffer.byteLength(line) > MAX_RELAY_LINE_BYTES) {
      write(rpcError(null, -32600, `a line over ${MAX_RELAY_LINE_BYTES} bytes`));
      continue;
    }
    const job = forward(line);
    pending.add(job);
    void job.finally(() => pending.delete(job));
  }
  await Promise.all(pending);
}

/** The JSON-RPC messages of one answer: a JSON body (one or a batch) or event-stream `data:` lines. */
export function parseAnswer(contentType: string, text: string): unknown[] {
  if (text.trim() === '') return [];
  const parse = (s: string): unknown[] => {
    try {
      const value = JSON.parse(s) as unknown;
      return Array.isArray(value) ? value : [value];
    } catch {
      return [];
    }
  };
  if (!contentType.includes('text/event-stream')) return parse(text);
  const messages: unknown[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data !== '') messages.push(...parse(data));
  }
  return messages;
}

function rpcError(id: JsonRpcId, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return cause === undefined ? message : `${message} (${cause})`;
}
