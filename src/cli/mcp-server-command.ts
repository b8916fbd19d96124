/**
 * `orchestrator mcp-server`: relays a runtime's stdio MCP traffic to the running service's
 * tool endpoint. It needs the endpoint and the session's token from its environment, which
 * the service puts there for the runtime it starts; run by hand it has neither and says so.
 */
import { relayStdio, TOOL_TOKEN_ENV, TOOL_URL_ENV } from '../tools/relay.js';

/** Relays until stdin ends; 0, or 1 with a coded message when the environment lacks the endpoint. */
export async function runMcpServer(env: NodeJS.ProcessEnv, err: (text: string) => void): Promise<number> {
  const url = env[TOOL_URL_ENV]?.trim() ?? '';
  const token = env[TOOL_TOKEN_ENV]?.trim() ?? '';
  const missing = [url === '' ? TOOL_URL_ENV : null, token === '' ? TOOL_TOKEN_ENV : null].filter(
    (n): n is string => n !== null,
  );
  if (missing.length > 0) {
    err(
      `orchestrator: tools_endpoint_unset: ${missing.join(' and ')} not set; this command is started by an ` +
        'agent runtime inside a session of the running service, which sets them (see docs/tools.md)\n',
    );
    return 1;
  }
  await relayStdio({ url, token, input: process.stdin, output: process.stdout });
  return 0;
}
