/**
 * The composition root of `orchestrator run`: builds the real parts from the
 * loaded workflow (store, tracker, agent, workspaces, logger), wires them into
 * the orchestrator, and owns process-level concerns: signals, `--once`, and
 * what the agent's environment may contain.
 */
import '../agent/kinds.js';
import '../tracker/kinds.js';
import { registerSecrets } from '../agent/core/sanitize.js';
import { agentKind } from '../agent/registry.js';
import { spendMicroUsd } from '../agent/usage/index.js';
import type { Diagnostic } from '../domain/diagnostic.js';
import { createLogger, type LogFormat, type LogLevel } from '../observability/logger.js';
import { Orchestrator } from '../orchestrator/orchestrator.js';
import { killOrphans, OWNER_ENV, ownerTag } from '../orchestrator/orphans.js';
import { SYSTEM_CLOCK } from '../orchestrator/ports.js';
import { openStore } from '../persistence/index.js';
import { trackerKind } from '../tracker/registry.js';
import { loadWorkflow, type Workflow } from '../workflow/load.js';
import { watchWorkflow } from '../workflow/watcher.js';
import { WorkspaceManager } from '../workspace/manager.js';
import { kindCatalog } from './catalog.js';
import { formatDiagnostics } from './diagnostics-format.js';

export interface ServiceOptions {
  once: boolean;
  /** Keep running until nothing runs and no retry is queued (demos, `make run`). */
  untilIdle?: boolean;
  logLevel?: LogLevel;
  logFormat?: LogFormat;
  envFile?: string;
}

/** Variables an agent never inherits from the orchestrator (its own settings and secrets). */
function agentEnvironment(
  env: NodeJS.ProcessEnv,
  secrets: readonly string[],
  tag: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name.startsWith('ORCHESTRATOR_')) continue;
    if (secrets.some((s) => s !== '' && value.includes(s))) continue;
    out[name] = value;
  }
  out[OWNER_ENV] = tag;
  return out;
}

/** Runs the service until a signal (or, with `once`, one tick and its workers). Returns the exit code. */
export async function runService(
  workflowPath: string,
  options: ServiceOptions,
  err: (text: string) => void,
): Promise<number> {
  const load = (text?: Uint8Array) =>
    loadWorkflow(workflowPath, {
      env: process.env,
      kinds: kindCatalog(),
      ...(options.envFile !== undefined ? { envFile: options.envFile } : {}),
      ...(text !== undefined ? { text } : {}),
    });
  const initial = load();
  const report = (diagnostics: Diagnostic[]) => {
    if (diagnostics.length > 0) err(formatDiagnostics('text', workflowPath, diagnostics, process.cwd()));
  };
  if (!initial.ok) {
    report(initial.diagnostics);
    return 1;
  }
  report(initial.workflow.diagnostics);
  const { config } = initial.workflow;
  const secrets = [config.tracker.apiKey].filter((s) => s !== '');
  const log = createLogger({
    level: options.logLevel ?? config.logging.level,
    format: options.logFormat ?? config.logging.format,
    secrets,
  });
  registerSecrets(secrets);

  const kind = agentKind(config.agent.kind);
  if (kind?.runtime === undefined) {
    err(`orchestrator run: agent kind "${config.agent.kind}" can be validated but not run by this build\n`);
    return 1;
  }
  const createTracker = trackerKind(config.tracker.kind)?.create;
  if (createTracker === undefined) {
    err(
      `orchestrator run: tracker kind "${config.tracker.kind}" can be validated but not run by this build\n`,
    );
    return 1;
  }
  const credentialValues = kind.runtime.credentialEnv.map((name) => process.env[name] ?? '');
  for (const value of credentialValues) if (value !== '') log.addSecret(value);
  registerSecrets(credentialValues);

  let store: ReturnType<typeof openStore>;
  try {
    store = openStore(config.dbPath);
  } catch (error) {
    err(`orchestrator run: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const tag = ownerTag(config.dbPath);
  const orphans = killOrphans(tag);
  if (orphans.length > 0)
    log.warn({ pids: orphans }, 'killed agent processes left by an earlier orchestrator');

  let tracker: Awaited<ReturnType<typeof createTracker>>;
  try {
    tracker = await createTracker(config.tracker);
  } catch (error) {
    err(`orchestrator run: ${error instanceof Error ? error.message : String(error)}\n`);
    store.close();
    return 1;
  }
  const workspaces = new WorkspaceManager({
    root: config.workspaceRoot,
    hooks: config.hooks,
    baseEnv: process.env,
    onHook: ({ hook, issueIdentifier, result }) =>
      (result.ok ? log.debug : log.warn)(
        {
          issue_identifier: issueIdentifier,
          hook,
          exit_code: result.exitCode,
          timed_out: result.timedOut,
          duration_ms: result.durationMs,
        },
        `hook ${hook} ${result.ok ? 'finished' : 'failed'}`,
      ),
  });
  const watcher = watchWorkflow(workflowPath, {
    initial: initial.workflow,
    load,
    onChange: () => log.info({ path: workflowPath }, 'workflow reloaded; applies to the next dispatch'),
    onError: (diagnostics) =>
      log.error(
        {
          path: workflowPath,
          diagnostics: diagnostics.map((d) => `${d.line ?? '-'}:${d.column ?? '-'} ${d.code}: ${d.message}`),
        },
        'workflow reload failed; keeping the last good config',
      ),
  });
  const rates = (w: Workflow) => w.config.tokenRates[w.config.agent.kind] ?? null;
  const orchestrator = new Orchestrator({
    workflow: { current: () => watcher.current(), reload: () => void watcher.reload() },
    tracker,
    agent: { adapter: kind.runtime.factory(), kind },
    workspaces,
    store,
    proofs: store.proofs,
    agentEnv: agentEnvironment(process.env, [...secrets], tag),
    credentialValues,
    pricing: (usage, amounts) => spendMicroUsd(amounts, usage, rates(watcher.current())),
    log,
    clock: SYSTEM_CLOCK,
  });

  log.info(
    { workflow: workflowPath, db: config.dbPath, agent: config.agent.kind, tracker: config.tracker.kind },
    'orchestrator starting',
  );
  const shutdown = async () => {
    await orchestrator.stop();
    await watcher.close();
    store.close();
    log.info({}, 'orchestrator stopped');
    log.flush();
  };

  if (options.once) {
    orchestrator.start({ autoTick: false });
    await orchestrator.tick();
    await orchestrator.idle();
    await shutdown();
    return 0;
  }
  if (options.untilIdle === true) {
    orchestrator.start();
    await orchestrator.tick();
    while (!orchestrator.settled()) await new Promise((resolve) => setTimeout(resolve, 250));
    await shutdown();
    return 0;
  }

  return new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals > 1) {
        log.error({ signal }, 'second signal: exiting now');
        log.flush();
        process.exit(1);
      }
      log.info({ signal }, 'shutting down: no new dispatches, cancelling running sessions');
      void shutdown().then(() => resolve(0));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    orchestrator.start();
  });
}
