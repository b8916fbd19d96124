import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAuxiliary } from '../../../src/agent/core/auxiliary.js';
import { type LaunchTarget, resolveLaunchTarget } from '../../../src/agent/core/launch-target.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'aux-root-'));
const ws = path.join(root, 'ISSUE-1');
mkdirSync(ws);
const home = mkdtempSync(path.join(os.tmpdir(), 'aux-home-'));
mkdirSync(path.join(home, 'bin'));
// Prints its working directory, then each argument on its own line, and the value of PROBE_ENV.
const probe = path.join(home, 'bin', 'probe-cli');
writeFileSync(
  probe,
  '#!/bin/sh\npwd -P\nfor a in "$@"; do printf "[%s]\\n" "$a"; done\necho "env=$PROBE_ENV"\necho noise >&2\n',
);
chmodSync(probe, 0o755);
const failing = path.join(home, 'bin', 'failing-cli');
writeFileSync(failing, '#!/bin/sh\necho partial\nexit 3\n');
chmodSync(failing, 0o755);

function target(command: string, remote: LocalRemoteHost | null): LaunchTarget {
  const r = resolveLaunchTarget({
    workspacePath: ws,
    workspaceRoot: root,
    command,
    defaultCommand: null,
    env: { PATH: '/usr/bin:/bin' },
    remote,
  });
  if (!r.ok) throw r.error;
  return r.target;
}

const EXPECTED = `${ws}\n[lead arg]\n[it's "quoted" $HOME]\nenv=given\n`;

describe('runAuxiliary', () => {
  it('here: runs the program with its leading and extra arguments in the workspace; stdout only', async () => {
    const out = await runAuxiliary(
      target(`${probe} lead`, null),
      ['arg', `it's "quoted" $HOME`],
      { PROBE_ENV: 'given', PATH: '/usr/bin:/bin' },
      5_000,
    );
    expect(out).toBe(EXPECTED.replace('[lead arg]', '[lead]\n[arg]'));
  });

  it('on a host: the same words arrive exactly, by variable, with a leading ~/ expanded on the host', async () => {
    const host = new LocalRemoteHost({ loginEnv: { HOME: home, PATH: '/usr/bin:/bin' } });
    const out = await runAuxiliary(
      target('~/bin/probe-cli lead', host),
      ['arg', `it's "quoted" $HOME`],
      { PROBE_ENV: 'given' },
      5_000,
    );
    expect(out).toBe(EXPECTED.replace('[lead arg]', '[lead]\n[arg]'));
    expect(host.runs[0]?.script).not.toContain('quoted');
  });

  it('a failing program, here or on a host, is null', async () => {
    const host = new LocalRemoteHost({ loginEnv: { PATH: '/usr/bin:/bin' } });
    expect(await runAuxiliary(target(failing, null), [], {}, 5_000)).toBeNull();
    expect(await runAuxiliary(target(failing, host), [], {}, 5_000)).toBeNull();
  });
});
