/**
 * The MCP face of the tool server: every catalog tool (and the tracker's query tool, when it
 * has one) registered on one `McpServer`, each call routed through `callTool`.
 *
 * The SDK would normally validate arguments itself and answer a bad call with its own
 * protocol error, before our code runs. That would give agents two different refusal shapes
 * and leave invalid calls out of the log and the metric, so the schema handed to the SDK
 * advertises the catalog's JSON Schema but accepts anything; `callTool` does the checking.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { callTool, type ToolErrorCode, type ToolResult } from './call.js';
import { offeredTools } from './catalog.js';
import type { ToolBackend, ToolPolicy, ToolSession } from './ports.js';

/** Name the server reports in the MCP handshake. */
export const TOOL_SERVER_NAME = 'orchestrator-tools';

export interface ToolServerOptions {
  session: ToolSession;
  backend: ToolBackend;
  policy: ToolPolicy;
  /** Called once per call, after it finished: the tool, `ok` or the error code, its duration. */
  onCall?: (tool: string, outcome: 'ok' | ToolErrorCode, durationMs: number) => void;
  /** Version reported in the handshake; defaults to `0.0.0`. */
  version?: string;
}

/** An MCP text result: the value as JSON, or `isError` with `<code>: <message>`. */
export interface ToolCallContent {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

/** Builds the server with every tool the session is offered registered; connect a transport to serve it. */
export function createToolServer(options: ToolServerOptions): McpServer {
  const { session, backend, policy, onCall } = options;
  const server = new McpServer({ name: TOOL_SERVER_NAME, version: options.version ?? '0.0.0' });
  for (const tool of offeredTools(backend.queryTool)) {
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: advertiseOnly(tool.input),
        annotations: { readOnlyHint: !tool.writes },
      },
      async (args: unknown): Promise<ToolCallContent> => {
        const startedAt = performance.now();
        const result = await callTool(tool.name, args, { session, backend, policy });
        reportCall(onCall, tool.name, result, performance.now() - startedAt);
        return toContent(result);
      },
    );
  }
  return server;
}

/** Serves `server` on this process's stdin/stdout until the client closes the stream. */
export async function serveStdio(server: McpServer): Promise<void> {
  await server.connect(new StdioServerTransport());
}

/** The MCP content for a call result. */
export function toContent(result: ToolResult): ToolCallContent {
  if (result.ok) return { content: [{ type: 'text', text: JSON.stringify(result.value) }] };
  return { content: [{ type: 'text', text: `${result.code}: ${result.message}` }], isError: true };
}

function reportCall(
  onCall: ToolServerOptions['onCall'],
  tool: string,
  result: ToolResult,
  durationMs: number,
): void {
  if (!onCall) return;
  try {
    onCall(tool, result.ok ? 'ok' : result.code, durationMs);
  } catch {
    // A broken logger must not turn a finished call into a protocol error.
  }
}

type PassThroughSchema = {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => { value: Record<string, unknown> };
    readonly jsonSchema: {
      readonly input: (options: { target: string }) => Record<string, unknown>;
      readonly output: (options: { target: string }) => Record<string, unknown>;
    };
  };
};

/** A schema that lists as `schema` but lets every value through to `callTool`. */
function advertiseOnly(schema: z.ZodType): PassThroughSchema {
  const toJson = (options: { target: string }): Record<string, unknown> =>
    z.toJSONSchema(schema, {
      target: options.target === 'draft-07' ? 'draft-07' : 'draft-2020-12',
      io: 'input',
    }) as Record<string, unknown>;
  return {
    '~standard': {
      version: 1,
      vendor: 'orchestrator',
      validate: (value) => ({
        value: typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {},
      }),
      jsonSchema: { input: toJson, output: toJson },
    },
  };
}
