/**
 * The operator's own tool servers (`agent.mcp_config`: a JSON file of `mcpServers`, the shape
 * most runtimes read), turned into the neutral form every session's tools are delivered in.
 *
 * Values never travel in a server's definition: each `env` value and each header becomes a
 * variable of the runtime's environment that the definition references, so a rendered
 * configuration on a command line or in a file holds names, not secrets. A value written as
 * `$NAME` or `${NAME}` is taken from the service's environment when the workflow loads.
 */
import { readFileSync } from 'node:fs';
import type { ConfigIssue } from '../domain/diagnostic.js';
import { OWN_TOOL_SERVER, type ToolDelivery, type ToolServerSpec } from '../domain/tool-delivery.js';
import type { Env } from './env-vars.js';

/** No servers: the value when `agent.mcp_config` is not set. */
export const NO_OPERATOR_TOOLS: ToolDelivery = Object.freeze({ servers: {}, env: {} });

const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const REFERENCE = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/;
/** A header value ending in a reference: `Bearer ${TOKEN}`. */
const TRAILING_REFERENCE = /^(.*?)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/s;
const AT = ['agent', 'mcp_config'];

/** Reads and checks the file; servers turned off (`disabled: true`, `enabled: false`) are left out. */
export function readMcpConfig(file: string, env: Env): { tools: ToolDelivery; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const fail = (code: string, message: string) => {
    issues.push({
      severity: 'error',
      code,
      message: `${file}: ${message}`,
      path: AT,
    });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unreadable = message.includes('ENOENT') || message.includes('EISDIR');
    fail(unreadable ? 'agent.mcp_config.unreadable' : 'agent.mcp_config.invalid', message);
    return { tools: NO_OPERATOR_TOOLS, issues };
  }
  const servers = isObject(parsed) ? parsed.mcpServers : undefined;
  if (!isObject(servers)) {
    fail('agent.mcp_config.invalid', 'expected an object with an "mcpServers" object');
    return { tools: NO_OPERATOR_TOOLS, issues };
  }
  const out: Record<string, ToolServerSpec> = {};
  const values: Record<string, string> = {};
  const setValue = (server: string, name: string, value: string): void => {
    if (Object.hasOwn(values, name) && values[name] !== value) {
      fail(
        'agent.mcp_config.env_conflict',
        `server "${server}" gives ${name} a value another server gives differently`,
      );
    }
    values[name] = value;
  };
  for (const [name, def] of Object.entries(servers)) {
    if (!SERVER_NAME.test(name)) {
      fail('agent.mcp_config.server_name', `server name "${name}" must be 1-64 letters, digits, "_" or "-"`);
      continue;
    }
    if (name.toLowerCase() === OWN_TOOL_SERVER) {
      fail(
        'agent.mcp_config.name_clash',
        `server "${name}" has the name of the orchestrator's own tool server; rename it`,
      );
      continue;
    }
    if (!isObject(def)) {
      fail('agent.mcp_config.invalid_server', `server "${name}" must be an object`);
      continue;
    }
    if (def.disabled === true || def.enabled === false) continue;
    const resolveValue = (value: string, what: string): string | null => {
      const ref = REFERENCE.exec(value);
      if (ref === null) return value;
      const variable = (ref[1] ?? ref[2]) as string;
      const resolved = env[variable];
      if (resolved === undefined || resolved === '') {
        fail('agent.mcp_config.env_unset', `server "${name}" ${what} names $${variable}, which is not set`);
        return null;
      }
      return resolved;
    };
    if (typeof def.command === 'string' && def.command.trim() !== '') {
      const args = def.args ?? [];
      if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
        fail('agent.mcp_config.invalid_server', `server "${name}": "args" must be a list of strings`);
        continue;
      }
      const envNames: string[] = [];
      for (const [variable, value] of Object.entries(isObject(def.env) ? def.env : {})) {
        if (typeof value !== 'string') {
          fail('agent.mcp_config.invalid_server', `server "${name}": env ${variable} must be a string`);
          continue;
        }
        const resolved = resolveValue(value, `env ${variable}`);
        if (resolved === null) continue;
        envNames.push(variable);
        setValue(name, variable, resolved);
      }
      out[name] = { transport: 'stdio', command: def.command, args: args as string[], envNames };
    } else if (typeof def.url === 'string' && /^https?:\/\//.test(def.url)) {
      const headers: Record<string, { prefix: string; variable: string }> = {};
      for (const [header, value] of Object.entries(isObject(def.headers) ? def.headers : {})) {
        if (typeof value !== 'string') {
          fail('agent.mcp_config.invalid_server', `server "${name}": header ${header} must be a string`);
          continue;
        }
        const trailing = TRAILING_REFERENCE.exec(value);
        if (trailing !== null) {
          const variable = (trailing[2] ?? trailing[3]) as string;
          const resolved = resolveValue(`$${variable}`, `header ${header}`);
          if (resolved === null) continue;
          headers[header] = { prefix: trailing[1] as string, variable };
          setValue(name, variable, resolved);
        } else {
          // A literal header (a key written into the file) still travels in the environment.
          const variable = `ORCHESTRATOR_MCP_${name}_${header}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
          headers[header] = { prefix: '', variable };
          setValue(name, variable, value);
        }
      }
      out[name] = { transport: 'http', url: def.url, headers };
    } else {
      fail(
        'agent.mcp_config.invalid_server',
        `server "${name}" needs a "command" (stdio) or an http(s) "url"`,
      );
    }
  }
  return { tools: { servers: out, env: values }, issues };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
