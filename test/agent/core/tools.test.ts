import { describe, expect, it } from 'vitest';
import {
  clearSecrets,
  maskSecrets,
  registerSecrets,
  sanitize,
  truncate,
  unwrapShell,
} from '../../../src/agent/core/sanitize.js';
import {
  MAX_IN_FLIGHT_TOOL_CALLS,
  mapToolCall,
  qualifiedToolName,
  ToolTracker,
} from '../../../src/agent/core/tools.js';

const table = {
  Bash: { kind: 'shell' as const, key: 'command' },
  Read: { kind: 'read' as const, key: 'file_path' },
  Edit: { kind: 'edit' as const, key: 'paths' },
};

describe('tool calls', () => {
  it('maps a known tool to its kind and argument', () => {
    expect(mapToolCall(table, 'Bash', { command: 'ls -la' })).toEqual({
      name: 'Bash',
      kind: 'shell',
      argument: 'ls -la',
    });
  });
  it('an unknown tool keeps only its name: no argument leaks', () => {
    expect(mapToolCall(table, 'WebFetch', { url: 'http://x' })).toEqual({
      name: 'WebFetch',
      kind: null,
      argument: null,
    });
  });
  it('an input without the expected member gives the kind without an argument', () => {
    expect(mapToolCall(table, 'Read', { path: '/x' })).toEqual({
      name: 'Read',
      kind: 'read',
      argument: null,
    });
  });
  it('several paths of one call are joined', () => {
    expect(mapToolCall(table, 'Edit', { paths: ['a', 'b'] }).argument).toBe('a, b');
  });
  it('a name like toString does not resolve through the prototype', () => {
    expect(mapToolCall(table, 'toString', {})).toEqual({ name: 'toString', kind: null, argument: null });
  });
  it('MCP tools are named server.tool', () => {
    expect(qualifiedToolName('tracker', 'fetch_issue')).toBe('tracker.fetch_issue');
  });
  it('the tracker pairs starts and ends and times them on its clock', () => {
    let now = 1000;
    const t = new ToolTracker(() => now);
    t.begin('a', { name: 'Bash', kind: 'shell', argument: 'ls' });
    now = 1250;
    expect(t.end('a')).toEqual({ call: { name: 'Bash', kind: 'shell', argument: 'ls' }, durationMs: 250 });
    expect(t.end('a')).toBeUndefined();
  });
  it('a result without a start is ignored, and unfinished calls are listed', () => {
    const t = new ToolTracker(() => 0);
    t.begin('x', { name: 'Bash', kind: 'shell', argument: null });
    expect(t.end('nope')).toBeUndefined();
    expect(t.pending().map((c) => c.name)).toEqual(['Bash']);
  });
  it('a runtime starting calls it never ends cannot grow the tracker without bound; recent calls still pair', () => {
    const t = new ToolTracker(() => 0);
    const starts = MAX_IN_FLIGHT_TOOL_CALLS * 50;
    for (let i = 0; i < starts; i++) t.begin(`c${i}`, { name: 'Bash', kind: 'shell', argument: `step ${i}` });
    expect(t.pending()).toHaveLength(MAX_IN_FLIGHT_TOOL_CALLS);
    expect(t.end(`c${starts - 1}`)?.call.argument).toBe(`step ${starts - 1}`);
    // The oldest were forgotten: their ends count as ends of calls that never began.
    expect(t.end('c0')).toBeUndefined();
  });
});

describe('the sanitiser', () => {
  it.each([
    ["bash -lc 'npm test'", 'npm test'],
    ['/bin/sh -c "echo \\"hi\\""', 'echo "hi"'],
    ["bash -lc 'it'\\''s'", "it's"],
    ['npm test', 'npm test'],
  ])('unwraps %j to %j', (input, expected) => {
    expect(unwrapShell(input)).toBe(expected);
  });

  it('strips the workspace path, replaces control characters and truncates, once', () => {
    const out = sanitize("bash -lc 'cat /ws/issue-1/src/a.ts\u001b[31m'", {
      workspacePath: '/ws/issue-1',
      unwrapShell: true,
      maxChars: 100,
    });
    expect(out).toBe('cat src/a.ts\uFFFD[31m');
  });

  it('masks registered secrets wherever they appear', () => {
    clearSecrets();
    registerSecrets(['s3cr3t-token', 'ab']);
    expect(maskSecrets('Authorization: Bearer s3cr3t-token; x=s3cr3t-token')).toBe(
      'Authorization: Bearer ***; x=***',
    );
    expect(maskSecrets('ab stays: too short to be a secret')).toBe('ab stays: too short to be a secret');
    clearSecrets();
  });

  it('says how much it cut', () => {
    expect(truncate('abcdef', 3)).toBe('abc… [3 more characters]');
  });
});
