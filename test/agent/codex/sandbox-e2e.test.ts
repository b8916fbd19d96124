/**
 * Codex's sandbox as a new operator meets it, with the built CLI (`npm run build`): HOME in
 * the temporary folder (as on many CI runners), `codex.sandbox: workspace-write` (the
 * default), the file tracker, the pinned Codex first on PATH and pointed at the fake model
 * server. Codex refuses to create its sandbox helper under the temporary folder, and with a
 * system bubblewrap that has no --argv0 every shell command then exits 1 while the turn
 * still completes. So `orchestrator run` must stop with `agent.sandbox.unusable` naming
 * Codex's words and the fix before any issue is claimed (issues file untouched, no run row,
 * no model request), and `orchestrator adapters` must show the same; with the fix the error
 * names (`codex.home_root` outside the temporary folder) the same workflow writes the file
 * through the sandbox, which still refuses a write outside the workspace.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterJson } from '../../../src/cli/adapters-command.js';
import { BUILT_MAIN, cliEnv, ensureBuilt } from '../../support/cli.js';
import { hasToolOutput, type OpenAIReply, openaiDialect } from '../../support/fake-model/openai.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { dbRuns } from '../../support/service.js';
import { CODEX_BIN, FAKE_KEY_ENV, realCodexSkipReason, writeFakeProviderHome } from './real-cli.js';
import { homeRootOutsideTemp, oldBwrapSkipReason } from './sandbox-support.js';

const cliSkip = realCodexSkipReason();
const skip = cliSkip ?? oldBwrapSkipReason();
if (skip !== null) console.warn(`codex sandbox end-to-end tests skipped: ${skip}`);

const RUN_TIMEOUT_MS = 150_000;
const PROMPT_MARK = 'Write hi to out.txt using the shell.';

const ISSUES = `${JSON.stringify(
  [{ id: '1', identifier: 'CDX-1', title: 'Write the greeting', state: 'Todo', description: '' }],
  null,
  2,
)}\n`;

function workflow(source: string, homeRoot: string | null): string {
  return `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
file:
  path: issues.json
workspace:
  root: ./workspaces
agent:
  kind: codex
  max_turns: 1
codex:
  sandbox: workspace-write
  credentials_home: ${source}
${homeRoot === null ? '' : `  home_root: ${homeRoot}\n`}---
${PROMPT_MARK} This is {{ issue.identifier }}: {{ issue.title }}.
`;
}

const children: ChildProcess[] = [];
const made: string[] = [];
let server: FakeModelServer | null = null;
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await server?.close();
  server = null;
});
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The model: for the issue's prompt a shell call (`cmd`), its answer after the output, "ready" otherwise. */
function script(cmd: string) {
  return (request: RecordedRequest): OpenAIReply => {
    if (hasToolOutput(request)) return { type: 'message', text: 'Done: wrote hi to out.txt.' };
    if (request.bodyText.includes(PROMPT_MARK)) {
      return { type: 'message', functionCall: { name: 'exec_command', arguments: { cmd } } };
    }
    return { type: 'message', text: 'ready' };
  };
}

/** A folder under the temporary folder with HOME in it, the issues file, and a source CODEX_HOME for the fake. */
function operatorDir(port: number) {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'codex-sandbox-e2e-')));
  made.push(dir);
  mkdirSync(path.join(dir, 'home'));
  // The key travels as a Codex credential variable: the agent environment keeps no other secret.
  const source = writeFakeProviderHome(path.join(dir, 'source'), port);
  const toml = path.join(source, 'config.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace(`"${FAKE_KEY_ENV}"`, '"OPENAI_API_KEY"'));
  writeFileSync(path.join(dir, 'issues.json'), ISSUES);
  // HOME in the temporary folder; no XDG_STATE_HOME and no TMPDIR, as a new operator has.
  const env = cliEnv({
    PATH: `${path.dirname(CODEX_BIN)}:${process.env.PATH ?? ''}`,
    HOME: path.join(dir, 'home'),
    OPENAI_API_KEY: 'sk-dummy-fake-key',
    RUST_LOG: 'error',
  });
  return { dir, source, env };
}

function runCli(args: readonly string[], dir: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [BUILT_MAIN, ...args], { cwd: dir, env });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const RUN = ['run', 'WORKFLOW.md', '--until-idle', '--port', '0', '--log-format', 'json'];

describe.skipIf(skip !== null)(
  'codex sandbox health with the built CLI, HOME in the temporary folder',
  () => {
    beforeAll(() => ensureBuilt(), 300_000);

    it(
      'orchestrator run stops with agent.sandbox.unusable before any issue is claimed; adapters says the same',
      async () => {
        server = await FakeModelServer.start([openaiDialect(script('echo hi > out.txt'))]);
        const { dir, source, env } = operatorDir(server.port);
        writeFileSync(path.join(dir, 'WORKFLOW.md'), workflow(source, null));

        const started = await runCli(RUN, dir, env);
        const explain = `exit ${started.code}\n${started.stderr}\n${started.stdout.slice(-4_000)}`;
        expect(started.code, explain).toBe(1);
        expect(started.stderr).toContain(
          "orchestrator run: agent.sandbox.unusable: the codex sandbox cannot run the agent's commands: " +
            'codex.sandbox workspace-write cannot run a command that writes a file in the workspace',
        );
        // Codex's own words, then the keys that fix it.
        expect(started.stderr).toContain(
          'Refusing to create helper binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf(' +
            `"${dir}/home/.local/state/orchestrator/codex-homes/`,
        );
        expect(started.stderr).toContain('bwrap: execvp codex-linux-sandbox: No such file or directory');
        expect(started.stderr).toContain(
          'Fix: set codex.home_root to a folder outside the temporary folder /tmp',
        );
        expect(started.stderr).toContain('codex.sandbox: danger-full-access, when the machine is itself');
        // Nothing was claimed, recorded or asked of the model.
        expect(readFileSync(path.join(dir, 'issues.json'), 'utf8')).toBe(ISSUES);
        expect(dbRuns(path.join(dir, '.orchestrator.db'))).toEqual([]);
        expect(server.requests).toEqual([]);
        expect(readdirSync(path.join(dir, 'workspaces'))).toEqual([]);

        const listed = await runCli(['adapters', '--json'], dir, env);
        expect(listed.code, listed.stderr).toBe(0);
        const { adapters } = JSON.parse(listed.stdout) as { adapters: AdapterJson[] };
        const codex = adapters.find((a) => a.kind === 'codex');
        expect(codex?.sandbox?.status).toBe('unusable');
        expect(codex?.sandbox?.detail).toContain('Refusing to create helper binaries under temporary dir');
        expect(adapters.find((a) => a.kind === 'mock')?.sandbox?.status).toBe('none');
        expect(adapters.find((a) => a.kind === 'claude-code')?.sandbox?.status).toBe('unprobeable');
        const text = await runCli(['adapters'], dir, env);
        expect(text.stdout).toMatch(/^codex\s+ok\s+codex-cli \S+\s+\S+\s+toml-config\s+unusable\s/m);
        expect(text.stdout).toContain('codex sandbox unusable: the codex sandbox cannot run');
      },
      RUN_TIMEOUT_MS + 60_000,
    );

    it(
      'with codex.home_root outside the temporary folder the same workflow writes the file through the sandbox',
      async () => {
        const homeRoot = homeRootOutsideTemp('e2e');
        made.push(homeRoot);
        const outside = path.join(homeRoot, 'escaped');
        server = await FakeModelServer.start([
          openaiDialect(script(`echo hi > out.txt && { touch '${outside}' || echo confined; }`)),
        ]);
        const { dir, source, env } = operatorDir(server.port);
        writeFileSync(path.join(dir, 'WORKFLOW.md'), workflow(source, homeRoot));

        const finished = await runCli(RUN, dir, env);
        const explain = `exit ${finished.code}\n${finished.stderr}\n${finished.stdout.slice(-6_000)}`;
        expect(finished.code, explain).toBe(0);
        expect(finished.stdout).toContain('"sandbox":"usable"');

        const [issue] = JSON.parse(readFileSync(path.join(dir, 'issues.json'), 'utf8')) as {
          state: string;
        }[];
        expect(issue?.state, explain).toBe('Review');
        const runs = dbRuns(path.join(dir, '.orchestrator.db'), 'CDX-1');
        expect(runs, explain).toMatchObject([{ exit_kind: 'succeeded', turns: 1 }]);
        expect(readFileSync(path.join(runs[0]?.workspace ?? '', 'out.txt'), 'utf8')).toBe('hi\n');
        // The command ran inside the sandbox: the write outside the workspace was refused.
        expect(existsSync(outside)).toBe(false);
        const output = JSON.stringify(server.requests.map((r) => r.body));
        expect(output).toContain('Read-only file system');
        expect(output).toContain('confined');
        expect(output).toContain('Process exited with code 0');
        // The managed CODEX_HOME was made under codex.home_root, nowhere under HOME.
        expect(readdirSync(homeRoot).filter((f) => f !== 'escaped')).toHaveLength(1);
        expect(existsSync(path.join(dir, 'home', '.local', 'state', 'orchestrator', 'codex-homes'))).toBe(
          false,
        );
      },
      RUN_TIMEOUT_MS + 60_000,
    );
  },
);
