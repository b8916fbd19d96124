/**
 * The `orchestrator` command line: its commands and exit codes. Commands load
 * their heavy parts lazily, so `validate` in a CI step never pays for clients it
 * does not use. The process entry point is main.ts.
 */
import net from 'node:net';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { OUTPUT_FORMATS, type OutputFormat } from './diagnostics-format.js';
import { packageVersion } from './version.js';

/** Exit code for bad usage (unknown flag, bad option value). */
export const EXIT_USAGE = 2;

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new InvalidArgumentError('expected an integer from 0 to 65535');
  }
  return port;
}

function parseHost(value: string): string {
  if (net.isIP(value) === 0) throw new InvalidArgumentError('expected an IP address such as 127.0.0.1');
  return value;
}

/**
 * The `.env` flag is `--dotenv`: Node 20 looks through its whole command line, this program's
 * arguments included, for `--env-file` and acts on it before any of our code runs (a missing
 * file stops Node with "not found", exit 9; a NODE_OPTIONS line in the file is applied to this
 * process). When the file exists, Node lets us start, and the old flag is refused here with a
 * pointer to the new one rather than half-working.
 */
function dotenvOption(): Option {
  return new Option('--dotenv <path>', 'read variables from this .env file (or set ORCHESTRATOR_ENV_FILE)');
}

function refusedEnvFileOption(): Option {
  return new Option('--env-file <path>').hideHelp().argParser((): never => {
    throw new InvalidArgumentError(
      'Node reads --env-file itself before the orchestrator starts; use --dotenv <path> instead',
    );
  });
}

/** The options' `.env` path under the name the commands take. */
function envFileOf(opts: { dotenv?: string }): { envFile?: string } {
  return opts.dotenv !== undefined ? { envFile: opts.dotenv } : {};
}

/** Builds the program; `exit` receives the exit code of whichever command ran. */
export function buildProgram(io: {
  out: (t: string) => void;
  err: (t: string) => void;
  exit: (code: number) => void;
}): Command {
  const program = new Command('orchestrator')
    .description('Runs coding-agent CLIs on tracker issues, driven by one WORKFLOW.md')
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError('(run "orchestrator --help" for usage)');

  program
    .command('validate')
    .description('check a workflow file offline and print coded diagnostics')
    .argument('[path]', 'workflow file', 'WORKFLOW.md')
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('text'))
    .option('--strict', 'treat warnings as errors', false)
    .addOption(dotenvOption())
    .addOption(refusedEnvFileOption())
    .action(
      async (workflowPath: string, opts: { format: OutputFormat; strict: boolean; dotenv?: string }) => {
        const { runValidate } = await import('./validate-command.js');
        const { format, strict } = opts;
        io.exit(runValidate(workflowPath, { format, strict, ...envFileOf(opts) }, io.out));
      },
    );

  program
    .command('run')
    .description(
      'run the service: poll the tracker, dispatch agents, retry, reconcile (until SIGINT/SIGTERM)',
    )
    .argument('[path]', 'workflow file', 'WORKFLOW.md')
    .option('--dry-run', 'print the dispatch plan of one tick and exit; nothing is claimed or started', false)
    .addOption(
      new Option('--once', 'run one tick, wait for its workers, then exit')
        .default(false)
        .conflicts('untilIdle'),
    )
    .option('--until-idle', 'run until nothing runs and no retry is queued, then exit (demos)', false)
    .option('--keep-serving', 'with --until-idle: then keep the dashboard up until Ctrl-C', false)
    .addOption(new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error']))
    .addOption(new Option('--log-format <format>', 'log format').choices(['auto', 'json', 'pretty']))
    .addOption(dotenvOption())
    .addOption(refusedEnvFileOption())
    .option('--port <port>', 'HTTP port (wins over server.port; 0 disables the server)', parsePort)
    .option('--host <ip>', 'HTTP bind address (wins over server.host)', parseHost)
    .action(
      async (
        workflowPath: string,
        opts: {
          port?: number;
          host?: string;
          dryRun: boolean;
          once: boolean;
          untilIdle: boolean;
          keepServing: boolean;
          dotenv?: string;
          logLevel?: 'debug' | 'info' | 'warn' | 'error';
          logFormat?: 'auto' | 'json' | 'pretty';
        },
      ) => {
        const { runRun } = await import('./run-command.js');
        io.exit(await runRun(workflowPath, { ...opts, ...envFileOf(opts) }, io.out, io.err));
      },
    );

  program
    .command('adapters')
    .description('list agent kinds: command found, version, health, usage reporting, tool channel')
    .option('--json', 'print JSON', false)
    .action(async (opts: { json: boolean }) => {
      const { runAdapters } = await import('./adapters-command.js');
      io.exit(await runAdapters(opts.json, io.out));
    });

  program
    .command('mcp-server')
    .description(
      "serve the running service's agent tools over stdio (started by an agent runtime, with the session's " +
        'ORCHESTRATOR_TOOLS_URL and ORCHESTRATOR_TOOLS_TOKEN in its environment)',
    )
    .action(async () => {
      const { runMcpServer } = await import('./mcp-server-command.js');
      io.exit(await runMcpServer(process.env, io.err));
    });

  return program;
}

/** Parses argv and runs; usage errors exit 2, help (asked for, or no command at all) and version exit 0. */
export async function main(argv: readonly string[]): Promise<number> {
  let code = 0;
  const program = buildProgram({
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    exit: (c) => {
      code = c;
    },
  });
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      // `help` and `help <command>` exit 0; help shown for a command that does not exist is bad usage.
      if (error.code === 'commander.help' && error.exitCode === 0) return 0;
      return EXIT_USAGE;
    }
    process.stderr.write(`orchestrator: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
