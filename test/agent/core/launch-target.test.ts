import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  auxiliaryCommand,
  checkWorkspace,
  resolveLaunchTarget,
  splitCommand,
} from '../../../src/agent/core/launch-target.js';
import type { RemoteHost } from '../../../src/domain/remote.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'lt-root-'));
const ws = path.join(root, 'ISSUE-1');
mkdirSync(ws);
const outside = mkdtempSync(path.join(os.tmpdir(), 'lt-outside-'));
const bin = mkdtempSync(path.join(os.tmpdir(), 'lt-bin-'));
writeFileSync(path.join(bin, 'agent-cli'), '#!/bin/sh\nexit 0\n');
chmodSync(path.join(bin, 'agent-cli'), 0o755);
writeFileSync(path.join(bin, 'not-exec'), 'x');

describe('the launch target', () => {
  it('a workspace inside the root passes', () => {
    expect(checkWorkspace(ws, root).ok).toBe(true);
  });

  it('a directory whose name starts with two dots is inside the root, not an escape', () => {
    const dotted = path.join(root, '.._.._etc');
    mkdirSync(dotted);
    expect(checkWorkspace(dotted, root).ok).toBe(true);
  });

  it.each([
    ['a relative path', 'ISSUE-1'],
    ['a missing directory', path.join(root, 'nope')],
    ['the root itself', root],
    ['a path outside the root', outside],
    ['a dot-dot escape', path.join(root, '..', path.basename(outside))],
  ])('refuses %s as invalid_workspace_cwd', (_what, p) => {
    const r = checkWorkspace(p, root);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.kind).toBe('invalid_workspace_cwd');
  });

  it('refuses a workspace that is a symlink pointing outside the root', () => {
    const link = path.join(root, 'ISSUE-2');
    symlinkSync(outside, link);
    const r = checkWorkspace(link, root);
    expect(!r.ok && r.error.kind).toBe('invalid_workspace_cwd');
  });

  it('refuses a file in place of the workspace directory', () => {
    const file = path.join(root, 'ISSUE-3');
    writeFileSync(file, '');
    expect(checkWorkspace(file, root).ok).toBe(false);
  });

  it('splits a multi-token command into program and leading arguments', () => {
    expect(splitCommand('  codex   app-server ')).toEqual(['codex', 'app-server']);
    const r = resolveLaunchTarget({
      workspacePath: ws,
      workspaceRoot: root,
      command: 'agent-cli serve --x',
      defaultCommand: null,
      env: { PATH: bin },
    });
    expect(r.ok && r.target).toMatchObject({ command: path.join(bin, 'agent-cli'), args: ['serve', '--x'] });
  });

  it('an argument with spaces or quotes reaches the program as one word, unexpanded, here and on a host', () => {
    const base = {
      workspacePath: ws,
      workspaceRoot: root,
      command: `agent-cli --x "$FOO" 'a b' "c \\"d\\""`,
      defaultCommand: null,
      env: { PATH: bin, FOO: 'expanded' },
    };
    const expected = ['--x', '$FOO', 'a b', 'c "d"'];
    const local = resolveLaunchTarget(base);
    expect(local.ok && local.target.args).toEqual(expected);
    const host = { name: 'worker-1' } as unknown as RemoteHost;
    const remote = resolveLaunchTarget({ ...base, remote: host });
    expect(remote.ok && remote.target).toMatchObject({ command: 'agent-cli', args: expected });
  });

  it('a command with an unclosed quote is refused with the reason, not split on blanks', () => {
    const r = resolveLaunchTarget({
      workspacePath: ws,
      workspaceRoot: root,
      command: "agent-cli 'a b",
      defaultCommand: null,
      env: { PATH: bin },
    });
    expect(!r.ok && r.error.message).toContain('unclosed single quote');
  });

  it('falls back to the default command and reports a missing one as agent_not_found', () => {
    const found = resolveLaunchTarget({
      workspacePath: ws,
      workspaceRoot: root,
      command: null,
      defaultCommand: 'agent-cli',
      env: { PATH: bin },
    });
    expect(found.ok).toBe(true);
    const missing = resolveLaunchTarget({
      workspacePath: ws,
      workspaceRoot: root,
      command: 'no-such-agent',
      defaultCommand: null,
      env: { PATH: bin },
    });
    expect(!missing.ok && missing.error.kind).toBe('agent_not_found');
    const notExec = resolveLaunchTarget({
      workspacePath: ws,
      workspaceRoot: root,
      command: 'not-exec',
      defaultCommand: null,
      env: { PATH: bin },
    });
    expect(!notExec.ok && notExec.error.kind).toBe('agent_not_found');
  });

  it('an auxiliary command re-checks the workspace before it is built', () => {
    const ws4 = path.join(root, 'ISSUE-4');
    mkdirSync(ws4);
    const r = resolveLaunchTarget({
      workspacePath: ws4,
      workspaceRoot: root,
      command: 'agent-cli',
      defaultCommand: null,
      env: { PATH: bin },
    });
    if (!r.ok) throw r.error;
    expect(auxiliaryCommand(r.target, ['--version']).ok).toBe(true);
    const moved = { ...r.target, workspacePath: path.join(root, 'gone') };
    const aux = auxiliaryCommand(moved, ['--version']);
    expect(!aux.ok && aux.error.kind).toBe('invalid_workspace_cwd');
  });
});
