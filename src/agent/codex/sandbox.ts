/**
 * Asks the installed Codex whether its sandbox works here, the way sessions will use it:
 * `codex sandbox -c sandbox_mode=… -- sh -c …` with the workflow's sandbox mode and `-c`
 * overrides, the setup's managed CODEX_HOME and the agent environment, in a folder
 * standing for a workspace. The trap it avoids: when Codex cannot set its sandbox up (its
 * home under the temporary folder makes it refuse to create the helper binaries, and a
 * system bubblewrap without `--argv0` then cannot find `codex-linux-sandbox`), every shell
 * command the model asks for exits 1, the model gives up politely and the turn still
 * completes, so an issue is handed off with nothing done. `danger-full-access` confines
 * nothing and needs no helper, so there is nothing to ask.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { resolveOnPath, splitCommand } from '../core/launch-target.js';
import type { SandboxProbeInput, SandboxProbeResult } from '../registry.js';
import { CODEX_DEFAULT_COMMAND, codexEnv, launchMode, overrideArgs, tomlValue } from './command.js';
import { type CodexConfig, codexBlock } from './config.js';
import { ensureManagedHome } from './home.js';

/** What the probe runs inside the sandbox: a file written in the workspace and removed again. */
export const WRITE_PROBE = 'f=.orchestrator-sandbox-probe.$$ && echo ok > "$f" && rm -f "$f"';
/** A read-only sandbox may not write anywhere: it only has to run a command. */
export const READ_PROBE = 'true';
/** Stderr kept in a cause, in characters (the CLI's own words are short; a panic is not). */
const MAX_CAUSE_CHARS = 1_500;

/** The `codex sandbox` arguments after the command's own, for the configured mode. */
export function sandboxProbeArgs(config: CodexConfig): string[] {
  const script = config.sandbox === 'read-only' ? READ_PROBE : WRITE_PROBE;
  return [
    'sandbox',
    ...overrideArgs(config, null),
    '-c',
    `sandbox_mode=${tomlValue(config.sandbox)}`,
    '--',
    'sh',
    '-c',
    script,
  ];
}

/** True when `folder` is `tmp` or inside it. */
function isInside(folder: string, tmp: string): boolean {
  const rel = path.relative(path.resolve(tmp), path.resolve(folder));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The settings that fix a sandbox that failed with `stderr`, most likely first; `homeRootSet`
 * says whether `codex.home_root` placed the home (then the state folder does not matter).
 */
export function sandboxFixes(
  home: string,
  env: Record<string, string>,
  stderr: string,
  homeRootSet: boolean,
): string[] {
  const tmp = env.TMPDIR !== undefined && env.TMPDIR !== '' ? env.TMPDIR : '/tmp';
  const fixes: string[] = [];
  if (/Refusing to create helper binaries/i.test(stderr) || isInside(home, tmp)) {
    const alternative = homeRootSet ? '' : '; XDG_STATE_HOME or HOME of the service outside it works too';
    fixes.push(
      `set codex.home_root to a folder outside the temporary folder ${tmp} ` +
        `(the managed CODEX_HOME is ${home}${alternative})`,
    );
  } else {
    fixes.push(
      `make \`codex sandbox\` work for the service user (run it with CODEX_HOME=${home} to see the same error)`,
    );
  }
  fixes.push('codex.sandbox: danger-full-access, when the machine is itself a disposable container or VM');
  return fixes;
}

interface Ran {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  spawnError: string | null;
}

function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        encoding: 'utf8',
        maxBuffer: 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const failure = error as (NodeJS.ErrnoException & { killed?: boolean; signal?: string }) | null;
        const spawnError = typeof failure?.code === 'string' ? failure.message : null;
        resolve({
          exitCode: failure === null ? 0 : typeof failure.code === 'number' ? failure.code : null,
          signal: failure?.signal ?? null,
          timedOut: failure?.killed === true,
          stdout: String(stdout),
          stderr: String(stderr),
          spawnError,
        });
      },
    );
    child.stdin?.end();
  });
}

/** The probe of the `codex` kind (its registry `sandbox` declaration). */
export async function probeCodexSandbox(input: SandboxProbeInput): Promise<SandboxProbeResult> {
  const parsed = codexBlock.parse(input.options);
  if (!parsed.ok) {
    return { status: 'unchecked', reason: parsed.issues.map((i) => i.message).join('; ') };
  }
  const config = parsed.config;
  if (config.sandbox === 'danger-full-access') {
    return { status: 'off', detail: 'codex.sandbox is danger-full-access: commands run unconfined' };
  }
  const [program, ...rest] = splitCommand(input.command ?? CODEX_DEFAULT_COMMAND);
  const file = program === undefined ? null : resolveOnPath(program, input.env.PATH);
  if (file === null) return { status: 'unchecked', reason: `${program ?? 'codex'} is not on PATH` };
  const home = ensureManagedHome({ config, env: input.env, command: input.command });
  if (!home.ok) return { status: 'unchecked', reason: home.message };

  const args = [...launchMode(rest).baseArgs, ...sandboxProbeArgs(config)];
  const ran = await run(file, args, {
    cwd: input.workspacePath,
    env: codexEnv(input.env, home.home),
    timeoutMs: input.timeoutMs,
  });
  const stderr = ran.stderr.trim();
  if (ran.spawnError !== null)
    return { status: 'unchecked', reason: `cannot run ${file}: ${ran.spawnError}` };
  if (ran.exitCode !== 0 && /unrecognized subcommand|unexpected argument/i.test(stderr)) {
    return { status: 'unchecked', reason: `this Codex build cannot be asked (\`codex sandbox\`): ${stderr}` };
  }
  const what =
    config.sandbox === 'read-only' ? 'run a command' : 'run a command that writes a file in the workspace';
  if (ran.exitCode === 0 && !ran.timedOut) {
    return { status: 'usable', detail: `codex.sandbox ${config.sandbox} can ${what}` };
  }
  const ending = ran.timedOut
    ? `did not finish within ${input.timeoutMs} ms`
    : `exited ${ran.exitCode ?? ran.signal ?? 'without a status'}`;
  return {
    status: 'unusable',
    summary: `codex.sandbox ${config.sandbox} cannot ${what} (\`codex sandbox\` ${ending}, CODEX_HOME ${home.home})`,
    cause: (stderr || ran.stdout.trim() || 'no output').slice(-MAX_CAUSE_CHARS),
    fixes: sandboxFixes(home.home, input.env, stderr, config.homeRoot !== null),
  };
}
