/**
 * The `toml-config` dialect: TOML tables `[mcp_servers.<name>]` of a runtime's config.toml.
 * A server's keys are produced once (`serverFields`) and printed as the lines of its table
 * or, for a runtime told its servers on the command line, as one inline table. TOML has no
 * variable references, so secrets stay names the runtime resolves itself: a stdio server
 * lists the variables it passes through from the runtime's environment (`env_vars`); an
 * http server names the variable of its bearer token (`bearer_token_env_var`) and of each
 * header sent as a variable's whole value (`env_http_headers`). A header of any other shape
 * cannot be said without its value, so it is refused rather than written out or dropped.
 */
import type { ToolDelivery, ToolServerSpec } from '../../../domain/tool-delivery.js';

/** One key of a server's table with its value, already written as TOML. */
export type TomlField = readonly [key: string, value: string];

/** The delivery as TOML text: one table per server, in the delivery's order. */
export function renderTomlConfig(delivery: ToolDelivery): string {
  return Object.entries(delivery.servers)
    .map(([name, spec]) => `${tomlTable(['mcp_servers', name], serverFields(name, spec))}\n`)
    .join('\n');
}

/**
 * A server's keys, written once here whatever the form they are printed in: the lines of its
 * table (`tomlTable`) or one inline table (`tomlInlineTable`).
 */
export function serverFields(name: string, spec: ToolServerSpec): TomlField[] {
  if (spec.transport === 'stdio') {
    return [
      ['command', tomlString(spec.command)],
      ['args', tomlArray(spec.args)],
      ['env_vars', tomlArray(spec.envNames)],
    ];
  }
  const fields: TomlField[] = [['url', tomlString(spec.url)]];
  const passed: [string, string][] = [];
  for (const [header, value] of Object.entries(spec.headers)) {
    if (header.toLowerCase() === 'authorization' && value.prefix === 'Bearer ') {
      fields.push(['bearer_token_env_var', tomlString(value.variable)]);
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
    fields.push([
      'env_http_headers',
      `{ ${passed.map(([h, v]) => `${tomlString(h)} = ${tomlString(v)}`).join(', ')} }`,
    ]);
  }
  return fields;
}

/** The fields as a table: its header line (`path` as keys), then one `key = value` line each. */
export function tomlTable(path: readonly string[], fields: readonly TomlField[]): string {
  return [`[${path.map(tomlKey).join('.')}]`, ...fields.map(([k, v]) => `${tomlKey(k)} = ${v}`)].join('\n');
}

/** The fields as one inline table, `{ key = value, … }`: a value that fits on one line. */
export function tomlInlineTable(fields: readonly TomlField[]): string {
  return `{ ${fields.map(([k, v]) => `${tomlKey(k)} = ${v}`).join(', ')} }`;
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
