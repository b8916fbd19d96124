/**
 * The tool servers of a Codex session. Codex reads MCP servers only from its configuration:
 * its config.toml, or `-c` overrides on its command line. Both forms print the same keys
 * (the `toml-config` dialect's, with Codex's own added), and hold no secret: only names of
 * variables of Codex's environment, which carries the values.
 *
 * A local session's servers are tables in its managed config.toml. That home is shared by
 * every session of a setup, so the tables live there in one marked block, after the
 * operator's own configuration: a session given tools writes its block (the operator's
 * tables of the same names give way, so no table is defined twice); every other session
 * keeps the block that is there and switches its servers off for its own process
 * (`-c mcp_servers.<name>.enabled=false`). The block is never removed, so a session starting
 * beside another never takes the other's tools away.
 *
 * A session on an SSH host gets its servers as `-c mcp_servers.<name>={ … }` overrides of
 * its own processes instead (`toolOverrideArgs`): the home there is written by a script
 * run per session, and a block in its shared config.toml would race between sessions.
 * Unlike the block, an override does not replace a table of the same name in the
 * operator's config.toml: Codex merges the two (and refuses a merge of two transports).
 */

import type { ToolDelivery, ToolServerSpec } from '../../domain/tool-delivery.js';
import {
  serverFields,
  type TomlField,
  tomlInlineTable,
  tomlKey,
  tomlString,
  tomlTable,
} from '../core/tool-dialects/toml-config.js';

/** The block a session writes: its text and the servers it defines. */
export interface ToolTables {
  text: string;
  names: readonly string[];
}

const BEGIN = '# >>> tool servers of the orchestrator (rewritten by each session given tools; do not edit)';
const END = '# <<< tool servers of the orchestrator';

/** How long Codex gives a tool server to start and list its tools. */
export const TOOL_SERVER_STARTUP_SEC = 30;

/**
 * Keys Codex reads besides the rendered ones: a longer start-up allowance than its default
 * 10 s (the relay is a Node process, slow to start on a loaded host), and the tools
 * approved without asking: a policy that asks (`on-request`, `untrusted`) would ask about
 * every write tool, and the client declines every question, as no person is there. The
 * service scopes and records each call itself.
 */
const CODEX_SERVER_KEYS: readonly TomlField[] = [
  ['startup_timeout_sec', String(TOOL_SERVER_STARTUP_SEC)],
  ['default_tools_approval_mode', tomlString('approve')],
];

/** A server's keys as Codex is told them: the dialect's, then Codex's own. */
function codexServerFields(name: string, spec: ToolServerSpec): TomlField[] {
  return [...serverFields(name, spec), ...CODEX_SERVER_KEYS];
}

/** The block for a delivery: each server's table with Codex's own keys added. */
export function toolTables(delivery: ToolDelivery): ToolTables {
  const names = Object.keys(delivery.servers);
  const tables = Object.entries(delivery.servers).map(
    ([name, spec]) => `${tomlTable(['mcp_servers', name], codexServerFields(name, spec))}\n`,
  );
  return { text: [BEGIN, ...tables, END].join('\n'), names };
}

/**
 * The delivery as `-c` arguments, one `mcp_servers.<name>={ … }` per server: the same keys
 * as its table, as an inline table. Codex splits an override's key on dots and reads no
 * quotes in it, so a server whose name is not a bare key cannot be addressed and is refused
 * (the names the service delivers always are).
 */
export function toolOverrideArgs(delivery: ToolDelivery): string[] {
  return Object.entries(delivery.servers).flatMap(([name, spec]) => {
    if (tomlKey(name) !== name) {
      throw new Error(
        `tool server ${name}: only a name of letters, digits, "_" and "-" can be given to Codex on its command line`,
      );
    }
    return ['-c', `mcp_servers.${name}=${tomlInlineTable(codexServerFields(name, spec))}`];
  });
}

/**
 * The managed config.toml: `base` (the source's text, or the managed copy's) without any
 * table of the block's servers, then the block: the session's `tables`, else the block
 * `current` holds. Null when there is neither base nor block (no file).
 */
export function composeConfig(
  base: string | null,
  current: string | null,
  tables: ToolTables | null,
): string | null {
  const block = tables ?? placedTables(current);
  if (block === null) return base === null ? null : withoutBlock(base);
  const rest = withoutTables(withoutBlock(base ?? ''), block.names).trimEnd();
  return `${rest === '' ? '' : `${rest}\n\n`}${block.text}\n`;
}

/** The block a config.toml holds, or null. */
export function placedTables(text: string | null): ToolTables | null {
  if (text === null) return null;
  const lines = text.split('\n');
  const begin = lines.indexOf(BEGIN);
  const end = lines.indexOf(END, begin + 1);
  if (begin < 0 || end < 0) return null;
  const inside = lines.slice(begin, end + 1);
  const names = inside
    .map(headerPath)
    .filter((p): p is string[] => p !== null && p.length === 2 && p[0] === 'mcp_servers')
    .map((p) => p[1] as string);
  return { text: inside.join('\n'), names };
}

/** `-c` overrides that switch off the servers of a block this session does not use. */
export function disabledServers(block: ToolTables | null): Record<string, boolean> {
  // A dotted `-c` path is split on dots, so only a bare name can be addressed.
  const names = (block?.names ?? []).filter((n) => tomlKey(n) === n);
  return Object.fromEntries(names.map((n) => [`mcp_servers.${n}.enabled`, false]));
}

/** The text without the marked block (a block with no end runs to the end of the file). */
function withoutBlock(text: string): string {
  const lines = text.split('\n');
  const begin = lines.indexOf(BEGIN);
  if (begin < 0) return text;
  const end = lines.indexOf(END, begin + 1);
  return [...lines.slice(0, begin), ...(end < 0 ? [] : lines.slice(end + 1))].join('\n');
}

/** The text without the tables (and their sub-tables) of these servers. */
function withoutTables(text: string, names: readonly string[]): string {
  const kept: string[] = [];
  let dropping = false;
  for (const line of text.split('\n')) {
    const header = headerPath(line);
    if (header !== null) {
      dropping = header[0] === 'mcp_servers' && header.length >= 2 && names.includes(header[1] as string);
    }
    if (!dropping) kept.push(line);
  }
  return kept.join('\n');
}

/** The key path of a table header line (`[a."b".c]` or `[[a.b]]`), or null for any other line. */
export function headerPath(line: string): string[] | null {
  const m = /^\s*\[\[?(.*?)\]\]?\s*(#.*)?$/.exec(line);
  if (m === null) return null;
  const inner = m[1] as string;
  const path: string[] = [];
  let i = 0;
  const skipSpace = () => {
    while (inner[i] === ' ' || inner[i] === '\t') i++;
  };
  while (true) {
    skipSpace();
    const key = readKey(inner, i);
    if (key === null) return null;
    path.push(key.value);
    i = key.next;
    skipSpace();
    if (i === inner.length) return path;
    if (inner[i] !== '.') return null;
    i++;
  }
}

/** One key at `i`: bare, "basic" (with escapes) or 'literal'; null when there is none. */
function readKey(s: string, i: number): { value: string; next: number } | null {
  const bare = /^[A-Za-z0-9_-]+/.exec(s.slice(i));
  if (bare !== null) return { value: bare[0], next: i + bare[0].length };
  if (s[i] === "'") {
    const close = s.indexOf("'", i + 1);
    return close < 0 ? null : { value: s.slice(i + 1, close), next: close + 1 };
  }
  if (s[i] !== '"') return null;
  let j = i + 1;
  while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
  if (j >= s.length) return null;
  try {
    return { value: JSON.parse(s.slice(i, j + 1)) as string, next: j + 1 };
  } catch {
    return null;
  }
}
