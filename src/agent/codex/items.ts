/**
 * Codex's thread items, read from either interface: `exec --json` spells item
 * types in snake_case (`command_execution`), the app-server in camelCase
 * (`commandExecution`), and the fields differ the same way. Both are reduced
 * here to one view, so the two sessions report the same tool calls with the same
 * names. A tool's name is the one the model called (`exec_command`,
 * `apply_patch`, `server.tool`), never the item type or a command line.
 */
import type { ToolCall, ToolMapping } from '../core/tools.js';
import { mapToolCall, qualifiedToolName } from '../core/tools.js';

export type CodexItem =
  | { type: 'command'; id: string; command: string; exitCode: number | null; status: string }
  | { type: 'file_change'; id: string; paths: string[]; status: string }
  | { type: 'mcp'; id: string; server: string; tool: string; status: string; failed: boolean }
  /** Another tool the model called (web search, a dynamic tool, a sub-agent call). */
  | { type: 'tool'; id: string; name: string; status: string }
  | { type: 'message'; id: string; text: string }
  | { type: 'reasoning'; id: string }
  /** A non-fatal error item (`Skill descriptions were shortened…`). */
  | { type: 'error'; id: string; message: string }
  /** The echo of our own input, plans, compactions and types this adapter does not know. */
  | { type: 'other'; id: string; name: string };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Codex's own tools: the main argument sits in the member named here of the input we build. */
const TOOLS: Readonly<Record<string, ToolMapping>> = {
  exec_command: { kind: 'shell', key: 'cmd' },
  apply_patch: { kind: 'edit', key: 'paths' },
};

/** One item of either interface; null when it is not an object with a type. */
export function readItem(raw: unknown): CodexItem | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const o = raw as Record<string, unknown>;
  const id = str(o.id);
  const status = str(o.status);
  switch (o.type) {
    case 'command_execution':
    case 'commandExecution':
      return {
        type: 'command',
        id,
        command: commandText(o.command),
        exitCode: num(o.exit_code ?? o.exitCode),
        status,
      };
    case 'file_change':
    case 'fileChange': {
      const changes = Array.isArray(o.changes) ? o.changes : [];
      const paths = changes
        .map((c) => (c !== null && typeof c === 'object' ? str((c as Record<string, unknown>).path) : ''))
        .filter((p) => p !== '');
      return { type: 'file_change', id, paths, status };
    }
    case 'mcp_tool_call':
    case 'mcpToolCall':
      return {
        type: 'mcp',
        id,
        server: str(o.server),
        tool: str(o.tool),
        status,
        failed: status === 'failed' || (o.error !== null && o.error !== undefined),
      };
    case 'web_search':
    case 'webSearch':
      return { type: 'tool', id, name: 'web_search', status };
    case 'dynamicToolCall':
      return { type: 'tool', id, name: str(o.tool) || 'dynamic_tool', status };
    case 'collab_tool_call':
    case 'collabToolCall':
      return { type: 'tool', id, name: str(o.tool) || 'collab_tool', status };
    case 'agent_message':
    case 'agentMessage':
      return { type: 'message', id, text: str(o.text) };
    case 'reasoning':
      return { type: 'reasoning', id };
    case 'error':
      return { type: 'error', id, message: str(o.message) };
    default:
      return { type: 'other', id, name: str(o.type) };
  }
}

/** A command as one string; the legacy interface gives it as an argv array. */
function commandText(value: unknown): string {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string').join(' ');
  return str(value);
}

/** The tool call an item stands for; null for items that are not tool calls. */
export function itemToolCall(item: CodexItem): ToolCall | null {
  switch (item.type) {
    case 'command':
      return mapToolCall(TOOLS, 'exec_command', { cmd: item.command });
    case 'file_change':
      return mapToolCall(TOOLS, 'apply_patch', { paths: item.paths });
    case 'mcp':
      return { name: qualifiedToolName(item.server, item.tool), kind: null, argument: null };
    case 'tool':
      return { name: item.name, kind: null, argument: null };
    default:
      return null;
  }
}

/** True when a completed tool item reports a failure (a refused command counts). */
export function itemFailed(item: CodexItem): boolean {
  switch (item.type) {
    case 'command':
      return (
        item.status === 'failed' ||
        item.status === 'declined' ||
        (item.exitCode !== null && item.exitCode !== 0)
      );
    case 'file_change':
    case 'tool':
      return item.status === 'failed' || item.status === 'declined';
    case 'mcp':
      return item.failed;
    default:
      return false;
  }
}
