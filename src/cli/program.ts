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
    .option('--env-file <path>', 'read variables from this .env file')
    .action(
      async (workflowPath: string, opts: { format: OutputFormat; strict: boolean; envFile?: string }) => {
        const { runValidate } = await import('./validate-command.js');
        io.exit(runValidate(workflowPath, opts, io.out));
      },
    );

  program
    .command('run')
    .description(
      'run the service: poll the tracker, dispatch agents, retry, reconcile (until SIGINT/SIGTERM)',
    )
    .argument('[path]', 'workflow file', 'WORKFLOW.md')
    .option('--dry-run', 'print the dispatch plan of one tick and exit; nothing is claimed or started', false)
    .option('--once', 'run one tick, wait for its workers, then exit', false)
    .option('--until-idle', 'run until nothing runs and no retry is queued, then exit (demos)', false)
    .addOption(new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error']))
    .addOption(new Option('--log-format <format>', 'log format').choices(['auto', 'json', 'pretty']))
    .option('--env-file <path>', 'read variables from this .env file')
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
          envFile?: string;
          logLevel?: 'debug' | 'info' | 'warn' | 'error';
          logFormat?: 'auto' | 'json' | 'pretty';
        },
      ) => {
        const { runRun } = await import('./run-command.js');
        io.exit(await runRun(workflowPath, opts, io.out, io.err));
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

  return program;
}

/** Parses argv and runs; usage errors exit 2, help and version exit 0. */
export async function main(argv: readonly string[]): Promise<number> {
  let code = 0;
  const program = buildProgram({
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    exit: (c) => {
      code = c;
    },
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      return EXIT_USAGE;
    }
    process.stderr.write(`orchestrator: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
