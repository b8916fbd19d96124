/**
 * The deliveries every tool dialect's renderer test renders: our server over stdio, and over
 * HTTP with a bearer header, each with a secret token in the environment that no rendering may
 * contain.
 */
import type { ToolDelivery, ToolServerSpec } from '../../../src/domain/tool-delivery.js';

export const TOKEN = 'dialect-token-5e6f7a8b9c0d1e2f3a4b';
export const URL = 'http://127.0.0.1:40999/mcp';

export const STDIO: ToolServerSpec = {
  transport: 'stdio',
  command: '/usr/bin/node',
  args: ['/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
  envNames: ['ORCHESTRATOR_TOOLS_URL', 'ORCHESTRATOR_TOOLS_TOKEN'],
};

export const HTTP: ToolServerSpec = {
  transport: 'http',
  url: URL,
  headers: { Authorization: { prefix: 'Bearer ', variable: 'ORCHESTRATOR_TOOLS_TOKEN' } },
};

export const stdio: ToolDelivery = {
  servers: { orchestrator: STDIO },
  env: { ORCHESTRATOR_TOOLS_URL: URL, ORCHESTRATOR_TOOLS_TOKEN: TOKEN },
};

export const http: ToolDelivery = {
  servers: { orchestrator: HTTP },
  env: { ORCHESTRATOR_TOOLS_TOKEN: TOKEN },
};
