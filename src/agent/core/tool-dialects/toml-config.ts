/**
 * The `toml-config` dialect: TOML tables `[mcp_servers.<name>]` of a runtime's config.toml.
 * TOML has no variable references, so secrets stay names the runtime resolves itself: a
 * stdio server lists the variables it passes through from the runtime's environment
 * (`env_vars`); an http server names the variable of its bearer token
 * (`bearer_token_env_var`) and of each header sent as a variable's whole value
 * (`env_http_headers`). A header of any other shape cannot be said without its value, so
 * it is refused rather than written out or dropped.
 */
import type { ToolDelivery, ToolServerSpec } from '../../../domain/tool-delivery.js';

/** The delivery as TOML text: one table per server, in the delivery's order. */
export function renderTomlConfig(delivery: ToolDelivery): string {
  return Object.entries(delivery.servers)
    .map(([name, spec]) => [`[mcp_servers.${tomlKey(name)}]`, ...serverLines(name, spec)].join('\n'))
    .map((table) => `${table}\n`)
    .join('\n');
}

function serverLines(name: string, spec: ToolServerSpec): string[] {
  if (spec.transport === 'stdio') {
    return [
      `command = ${tomlString(spec.command)}`,
      `args = ${tomlArray(spec.args)}`,
      `env_vars = ${tomlArray(spec.envNames)}`,
    ];
  }
  const lines = [`url = ${tomlString(spec.url)}`];
  const passed: [string, string][] = [];
  for (const [header, value] of Object.entries(spec.headers)) {
    if (header.toLowerCase() === 'authorization' && value.prefix === 'Bearer ') {
      lines.push(`bearer_token_env_var = ${tomlString(value.variable)}`);
    } else if (value.prefix === '') {
      passed.push([header, value.variable]);
    } else {
      throw new Error(
        `tool server ${name}: header ${header} (a prefix before variable ${value.variable}) cannot be ` +
          'written as TOML config without its value',
      );
    }
  }
  if (passed.length > 0) {
    lines.push(
      `env_http_headers = { ${passed.map(([h, v]) => `${tomlString(h)} = ${tomlString(v)}`).join(', ')} }`,
    );
  }
  return lines;
}

/** A key: bare when TOML allows it, else a quoted string. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** A TOML basic string: quote, backslash and every control character escaped. */
export function tomlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function tomlArray(values: readonly string[]): string {
  return `[${values.map(tomlString).join(', ')}]`;
}
