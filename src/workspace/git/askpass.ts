/**
 * Credentials for one git command without the token touching argv, a remote URL, `.git/config`,
 * any process's environment or the agent's. A private folder (0700) holds the token in a 0600
 * file and a small script that git runs as `GIT_ASKPASS`: it answers the username prompt with a
 * fixed name and the password prompt with the file's content. The folder is removed as soon as
 * the command ends. (A variable would be inherited by git and its transport helpers too; the
 * file is read by the helper alone.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A one-shot askpass helper: the environment to add to one git command, and its removal. */
export interface AskpassHelper {
  env: Record<string, string>;
  dispose(): void;
}

/** Writes the helper answering `username` and `token` to git's prompts. */
export function createAskpass(token: string, username = 'x-access-token'): AskpassHelper {
  const dir = mkdtempSync(path.join(tmpdir(), 'orchestrator-askpass-'));
  const script = path.join(dir, 'askpass');
  writeFileSync(path.join(dir, 'token'), token, { mode: 0o600 });
  // git passes the prompt as $1: "Username for '…': " or "Password for '…': ".
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      'case "$1" in',
      `  Username*) printf '%s\\n' '${username.replace(/'/g, '')}' ;;`,
      '  *) cat "$(dirname "$0")/token"; echo ;;',
      'esac',
      '',
    ].join('\n'),
    { mode: 0o700 },
  );
  return {
    env: {
      GIT_ASKPASS: script,
      // Never fall back to a terminal prompt or to a credential helper the operator configured.
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: '',
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
