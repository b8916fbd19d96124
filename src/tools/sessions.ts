/**
 * The tool endpoint's sessions: each agent session gets its own bearer token, and a request
 * is served only with the session that token names. A token dies with its session: after
 * `close` the same token gets 401, as an unknown one does.
 *
 * The token is the whole identity. The endpoint never reads an issue id or a run id from a
 * request, so an agent cannot ask to act as another session; it can only present a token,
 * and the token decides.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { createToolServer, type ToolServerOptions } from './mcp-server.js';

/** The path the endpoint serves MCP on. */
export const TOOL_ENDPOINT_PATH = '/mcp';

interface OpenSession {
  /** SHA-256 of the token: the map is keyed by the digest so a lookup reveals nothing by timing. */
  digest: Buffer;
  handler: McpHttpHandler;
}

/** The live tool sessions, by token. */
export class ToolSessions {
  private readonly byDigest = new Map<string, OpenSession>();

  /** Opens a session served with `options`; returns its bearer token (256 random bits). */
  open(options: ToolServerOptions): string {
    const token = randomBytes(32).toString('base64url');
    const digest = digestOf(token);
    // One server per request (stateless): nothing of one call survives into the next but
    // what the backend keeps, so two connections of one session cannot disagree.
    const handler = createMcpHandler(() => createToolServer(options));
    this.byDigest.set(digest.toString('hex'), { digest, handler });
    return token;
  }

  /** Ends the session of `token`; later requests with it are refused. Idempotent. */
  close(token: string): void {
    const key = digestOf(token).toString('hex');
    const session = this.byDigest.get(key);
    if (session === undefined) return;
    this.byDigest.delete(key);
    void session.handler.close().catch(() => undefined);
  }

  /** Sessions open now. */
  get size(): number {
    return this.byDigest.size;
  }

  /** Serves one HTTP request: 401 without a live session's token, 404 off the MCP path. */
  async fetch(request: Request): Promise<Response> {
    // Only loopback names: the endpoint is reached on this machine or through an SSH forward,
    // and a page in a browser must not reach it by rebinding a name to 127.0.0.1.
    const badHost = hostHeaderValidationResponse(request, localhostAllowedHostnames());
    if (badHost !== undefined) return badHost;
    if (new URL(request.url).pathname !== TOOL_ENDPOINT_PATH) return refusal(404, 'not found');
    const session = this.sessionOf(request.headers.get('authorization'));
    if (session === undefined) {
      return refusal(401, 'no live tool session has this token (the session may have ended)', {
        'www-authenticate': 'Bearer realm="orchestrator-tools"',
      });
    }
    return session.handler.fetch(request);
  }

  private sessionOf(authorization: string | null): OpenSession | undefined {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (match === null) return undefined;
    const digest = digestOf(match[1] as string);
    const session = this.byDigest.get(digest.toString('hex'));
    return session !== undefined && timingSafeEqual(session.digest, digest) ? session : undefined;
  }
}

function digestOf(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A JSON-RPC-shaped refusal, so MCP clients show the message rather than a bare status. */
function refusal(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
