/**
 * The tool servers' tables in a managed config.toml. Codex reads MCP servers only from its
 * configuration, and the managed home is shared by every session of a setup, so the tables
 * live there in one marked block, after the operator's own configuration: a session given
 * tools writes its block (the operator's tables of the same names give way, so no table is
 * defined twice); every other session keeps the block that is there and switches its
 * servers off for its own process (`-c mcp_servers.<name>.enabled=false`). The block is
 * never removed, so a session starting beside another never takes the other's tools away.
 * The tables hold no secret: only names of variables of Codex's environment.
 */

import type { ToolDelivery } from '../../domain/tool-delivery.js';
import { renderToolConfig } from '../core/tool-config.js';
import { tomlKey } from '../core/tool-dialects/toml-config.js';

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
const CODEX_SERVER_KEYS = [
  `startup_timeout_sec = ${TOOL_SERVER_STARTUP_SEC}`,
  'default_tools_approval_mode = "approve"',
];

/** The block for a delivery: each server's rendered table with Codex's own keys added. */
export function toolTables(delivery: ToolDelivery): ToolTables {
  const names = Object.keys(delivery.servers);
  const tables = Object.entries(delivery.servers).map(([name, spec]) => {
    const table = renderToolConfig('toml-config', { servers: { [name]: spec }, env: {} }) as string;
    return `${table.trimEnd()}\n${CODEX_SERVER_KEYS.join('\n')}\n`;
  });
  return { text: [BEGIN, ...tables, END].join('\n'), names };
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
