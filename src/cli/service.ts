/**
 * The composition root of `orchestrator run`: builds the real parts from the
 * loaded workflow (store, tracker, agent, workspaces, logger), wires them into
 * the orchestrator, and owns process-level concerns: signals, `--once`, and
 * what the agent's environment may contain.
 */
import '../agent/kinds.js';
import '../tracker/kinds.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { forgetSecrets, registerSecrets } from '../agent/core/sanitize.js';
import { agentKind } from '../agent/registry.js';
import { spendMicroUsd } from '../agent/usage/index.js';
import type { Diagnostic } from '../domain/diagnostic.js';
import type { ForgeAdapter } from '../domain/forge.js';
import type { TrackerAdapter } from '../domain/tracker.js';
import { instrumentTracker } from '../observability/instrument-tracker.js';
import { createLogger, type LogFormat, type LogLevel } from '../observability/logger.js';
import { createMetrics } from '../observability/metrics.js';
import type { Observation } from '../orchestrator/observations.js';
import { Orchestrator } from '../orchestrator/orchestrator.js';
import { killOrphans, ownerTag } from '../orchestrator/orphans.js';
import { SYSTEM_CLOCK } from '../orchestrator/ports.js';
import { openStore, type RunRecord, type Store } from '../persistence/index.js';
import { dashboardPage } from '../server/dashboard.js';
import { type RunningServer, startServer } from '../server/http.js';
import type { AdapterHealth } from '../server/ports.js';
import { listenToolEndpoint, type ToolEndpoint } from '../tools/http.js';
import { ToolSessions } from '../tools/sessions.js';
import { trackerKind } from '../tracker/registry.js';
import { loadWorkflow, type Workflow } from '../workflow/load.js';
import { watchWorkflow } from '../workflow/watcher.js';
import { type HookResult, WorkspaceManager } from '../workspace/manager.js';
import { adapterReports } from './adapters-command.js';
import { kindCatalog } from './catalog.js';
import { closingRows, formatClosingTable } from './closing-report.js';
import { formatDiagnostics } from './diagnostics-format.js';
import { createRemoteWorkers } from './remote-workers.js';
import { checkStartSandbox } from './sandbox-health.js';
import { agentEnvironment, remoteAgentEnvironment, secretValues } from './secrets.js';
import { packageVersion } from './version.js';

/** How a runtime on this machine starts `orchestrator mcp-server`: this Node, the CLI's entry file. */
function relayCommand(): { command: string; args: string[] } {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // Built, the entry sits beside this file; run from source (tests), the built one is used.
  const entry =
    [path.join(here, 'main.js'), path.resolve(here, '../../dist/cli/main.js')].find((p) => existsSync(p)) ??
    path.join(here, 'main.js');
  return { command: process.execPath, args: [entry, 'mcp-server'] };
}

export interface ServiceOptions {
  once: boolean;
  /** Keep running until nothing runs and no retry is queued (demos, `make run`), then print the closing table. */
  untilIdle?: boolean;
  /** With `untilIdle`: once idle, keep the service and its HTTP server up until SIGINT/SIGTERM. */
  keepServing?: boolean;
  logLevel?: LogLevel;
  logFormat?: LogFormat;
  envFile?: string;
  /** HTTP port from `--port` (wins over `server.port`; a busy one is a start-up error). */
  port?: number;
  host?: string;
}

/**
 * Runs the service until a signal (or, with `once`, one tick and its workers; with `untilIdle`,
 * until idle). `out` gets the closing table of `untilIdle`. Returns the exit code.
 */
export async function runService(
  workflowPath: string,
  options: ServiceOptions,
  err: (text: string) => void,
  out: (text: string) => void = err,
): Promise<number> {
  const load = (text?: Uint8Array) =>
    loadWorkflow(workflowPath, {
      env: process.env,
      kinds: kindCatalog(),
      // The same gate as `validate`: a template that fails on the sample issue never runs.
      checkRender: true,
      // The issues file and SSH key must be here: without them every tick or connection fails.
      localFiles: 'error',
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
  // The values the operator's own tool servers get are masked like every other credential.
  const secrets = [...secretValues(config, process.env), ...Object.values(config.agent.mcpServers.env)];
  const log = createLogger({
    level: options.logLevel ?? config.logging.level,
    format: options.logFormat ?? config.logging.format,
    secrets,
  });
  // The log's values also mask the API and the metrics (`log.mask`); the agents' events have their own.
  registerSecrets(secrets);
  /** Masks `values` from now on in the log, the agents' events, the metrics and the API. */
  const addSecrets = (values: readonly string[]) => {
    registerSecrets(values);
    for (const value of values) log.addSecret(value);
  };
  /** Stops masking values that are secrets no more (a session token once its session ended). */
  const forgetMasked = (values: readonly string[]) => {
    forgetSecrets(values);
    for (const value of values) log.removeSecret(value);
  };

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

  let store: ReturnType<typeof openStore>;
  try {
    store = openStore(config.dbPath);
  } catch (error) {
    err(`orchestrator run: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const tag = ownerTag(config.dbPath);
  const orphans = await killOrphans(tag);
  if (orphans.pids.length > 0)
    log.warn({ pids: orphans.pids }, 'killed processes left by an earlier orchestrator');
  if (orphans.survivors.length > 0) {
    log.warn({ pids: orphans.survivors }, 'processes left by an earlier orchestrator are still exiting');
  }

  const agentEnv = agentEnvironment(process.env, secrets, kind.runtime.credentialEnv, tag);
  // Before any issue is claimed: a sandbox that refuses every command would still "succeed".
  if (
    !(await checkStartSandbox({ config, runtime: kind.runtime, agentEnv, store: store.proofs, log, err }))
  ) {
    store.close();
    return 1;
  }

  const version = packageVersion();
  let orchestrator: Orchestrator | null = null;
  // Known once the tracker is made; a `tool` label of the metrics besides the catalog's.
  let queryToolName: string | null = null;
  const metrics = createMetrics({
    version,
    queryToolName: () => queryToolName,
    snapshot: () => {
      if (orchestrator === null) throw new Error('the orchestrator is not started yet');
      return orchestrator.snapshot();
    },
  });
  const listeners = new Set<(observation: Observation) => void>();
  /** Issues dispatched since start, by id (for the closing table of `--until-idle`). */
  const dispatched = new Map<string, string>();
  listeners.add((o) => {
    if (o.type === 'dispatched') dispatched.set(o.issue.id, o.issue.identifier);
  });
  const observe = (observation: Observation) => {
    metrics.observe(observation);
    for (const listener of listeners) listener(observation);
  };

  let tracker: Awaited<ReturnType<typeof createTracker>>;
  // Built whenever the kind has one, so a reload that adds `git:` opens pull requests too.
  let forge: ForgeAdapter | null = null;
  try {
    const context = {
      warn: (detail: string) => log.warn({ tracker: config.tracker.kind, detail }, 'tracker warning'),
    };
    tracker = instrumentTracker(await createTracker(config.tracker, context), metrics.trackerRequest);
    queryToolName = tracker.queryTool?.name ?? null;
    const createForge = trackerKind(config.tracker.kind)?.createForge;
    if (createForge !== undefined) forge = await createForge(config.tracker, context);
  } catch (error) {
    err(`orchestrator run: ${error instanceof Error ? error.message : String(error)}\n`);
    store.close();
    return 1;
  }
  const onHook = ({
    hook,
    issueIdentifier,
    result,
  }: {
    hook: string;
    issueIdentifier: string;
    result: HookResult;
  }) =>
    (result.ok ? log.debug : log.warn)(
      {
        issue_identifier: issueIdentifier,
        hook,
        exit_code: result.exitCode,
        timed_out: result.timedOut,
        duration_ms: result.durationMs,
      },
      `hook ${hook} ${result.ok ? 'finished' : 'failed'}`,
    );
  const workspaces = new WorkspaceManager({
    root: config.workspaceRoot,
    hooks: config.hooks,
    baseEnv: process.env,
    onHook,
    ownsLegacy: (issueId, path) => store.onlyIssueUsedWorkspace(issueId, path),
    ownerTag: tag,
  });
  // Built even without hosts, so a reload that adds `worker.ssh_hosts` takes effect.
  const remote = createRemoteWorkers({
    ownsLegacy: (issueId, path) => store.onlyIssueUsedWorkspace(issueId, path),
    config,
    env: process.env,
    agentEnv: remoteAgentEnvironment(process.env, kind.runtime.credentialEnv, config.worker.forwardEnv, tag),
    ownerTag: tag,
    onHook,
    warn: (message, fields) => log.warn({ ...fields }, message),
  });
  const watcher = watchWorkflow(workflowPath, {
    initial: initial.workflow,
    load,
    onChange: (reloaded) => {
      // A reload may give the operator's tool servers new values: masked before any session gets them.
      addSecrets(Object.values(reloaded.config.agent.mcpServers.env));
      log.info({ path: workflowPath }, 'workflow reloaded; applies to the next dispatch');
    },
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
  // Listening even with `tools.enabled: false`, so a reload that turns tools on reaches the
  // next session; the endpoint is loopback only and refuses every request without a session.
  const toolSessions = new ToolSessions();
  let toolEndpoint: ToolEndpoint;
  try {
    toolEndpoint = await listenToolEndpoint(toolSessions);
  } catch (error) {
    err(
      `orchestrator run: tools_endpoint_failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    await watcher.close();
    store.close();
    return 1;
  }
  orchestrator = new Orchestrator({
    workflow: { current: () => watcher.current(), reload: () => void watcher.reload() },
    tracker,
    agent: { adapter: kind.runtime.factory(), kind },
    workspaces,
    remote,
    store,
    proofs: store.proofs,
    agentEnv,
    credentialValues,
    pricing: (usage, amounts) => spendMicroUsd(amounts, usage, rates(watcher.current())),
    log,
    clock: SYSTEM_CLOCK,
    observe,
    forge,
    tools: {
      sessions: toolSessions,
      url: toolEndpoint.url,
      port: toolEndpoint.port,
      relay: relayCommand(),
      version,
      // A live token is masked wherever the agent's output goes: an agent that prints its
      // environment must not hand the token to whoever reads the log.
      masking: { add: (token) => addSecrets([token]), remove: (token) => forgetMasked([token]) },
    },
  });
  const service = orchestrator;

  log.info(
    {
      workflow: workflowPath,
      db: config.dbPath,
      agent: config.agent.kind,
      tracker: config.tracker.kind,
      tool_endpoint: toolEndpoint.url,
    },
    'orchestrator starting',
  );
  let server: RunningServer | null = null;
  const port = options.port ?? config.server.port;
  if (port !== 0) {
    let adapters: readonly AdapterHealth[] = [];
    void adapterReports(process.env, false).then((reports) => {
      adapters = reports.map((r) => ({
        kind: r.kind,
        runnable: r.runnable,
        version: r.version,
        health: r.health,
        detail: r.detail,
      }));
    });
    const bind = { host: options.host ?? config.server.host, port };
    const started = await startServer(
      {
        version,
        startedAtMs: Date.now(),
        nowMs: () => Date.now(),
        workflowPath,
        snapshot: () => service.snapshot(),
        store,
        // The address actually served, not the one in the file, when --port/--host override it.
        config: () => {
          const current = watcher.current().config;
          return { ...current, server: { ...current.server, host: bind.host, port: bind.port } };
        },
        priceTokens: (usage) => spendMicroUsd([], usage, rates(watcher.current())),
        adapters: () => adapters,
        refresh: () => service.requestRefresh(),
        metrics: async () => {
          const exposition = await metrics.exposition();
          return { ...exposition, body: log.mask(exposition.body) };
        },
        subscribe: (listener) => {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
        mask: (text) => log.mask(text),
      },
      {
        host: bind.host,
        port,
        portExplicit: options.port !== undefined || config.server.portExplicit,
        allowedHosts: config.server.allowedHosts,
        log,
        dashboard: dashboardPage,
      },
    );
    if (!started.ok) {
      err(`orchestrator run: ${started.code}: ${started.message}\n`);
      await toolEndpoint.close();
      await watcher.close();
      store.close();
      return 1;
    }
    server = started.server;
  }

  /** Stops everything; 1 when results the database never took were lost (the log names them), else 0. */
  const shutdown = async (): Promise<number> => {
    await service.stop();
    await remote.close();
    await server?.close();
    await toolEndpoint.close();
    await watcher.close();
    store.close();
    log.info({}, 'orchestrator stopped');
    log.flush();
    return service.unrecordedWrites() > 0 ? 1 : 0;
  };

  // Recovery at start writes to the store; a failure there ends the process with exit 1
  // instead of leaving a server up with nothing behind it.
  const startService = (autoTick: boolean): boolean => {
    try {
      service.start({ autoTick });
      return true;
    } catch (error) {
      err(`orchestrator run: ${error instanceof Error ? error.message : String(error)}\n`);
      return false;
    }
  };
  if (options.once) {
    if (!startService(false)) {
      await shutdown();
      return 1;
    }
    await service.tick();
    await service.idle();
    return shutdown();
  }
  if (options.untilIdle === true) {
    if (!startService(true)) {
      await shutdown();
      return 1;
    }
    await untilIdle(service);
    const table = await closingTable(service, tracker, store, dispatched, watcher.current());
    if (options.keepServing !== true || server === null) {
      const code = await shutdown();
      out(table);
      return code;
    }
    out(`${table}The dashboard stays up at ${server.url}/ until Ctrl-C.\n`);
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
      void shutdown().then(resolve);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // After `--until-idle --keep-serving` the service is started already.
    if (options.untilIdle !== true && !startService(true)) void shutdown().then(() => resolve(1));
  });
}

/**
 * Resolves once nothing runs, no retry is queued and a tick after that dispatched nothing, so
 * the last tick saw the final states (an exit's refresh tick may not have run yet when the
 * last worker is done) and the waiting list says why each issue stays.
 */
async function untilIdle(service: Orchestrator): Promise<void> {
  for (;;) {
    while (!service.settled()) await new Promise((resolve) => setTimeout(resolve, 250));
    await service.tick();
    if (service.settled()) return;
  }
}

/** The closing table of `--until-idle`: reads the tracker's final states and each issue's last run. */
async function closingTable(
  service: Orchestrator,
  tracker: TrackerAdapter,
  store: Store,
  dispatched: ReadonlyMap<string, string>,
  workflow: Workflow,
): Promise<string> {
  const { waiting } = service.snapshot();
  const states = new Map<string, string>(waiting.map((w) => [w.issueId, w.state]));
  const unread = [...dispatched.keys()].filter((id) => !states.has(id));
  try {
    for (const reading of unread.length === 0 ? [] : await tracker.fetchIssueStatesByIds(unread)) {
      states.set(reading.id, reading.state);
    }
  } catch {
    // Without the tracker the table still has the last run of each issue.
    for (const id of unread) states.set(id, '?');
  }
  const lastRuns = new Map<string, RunRecord>();
  try {
    for (const id of dispatched.keys()) {
      const [run] = store.runsForIssue(id, 1);
      if (run !== undefined) lastRuns.set(id, run);
    }
  } catch {
    // A database that cannot answer now: the rows say what the owner and the tracker know.
  }
  const { tracker: settings } = workflow.config;
  return formatClosingTable(
    closingRows({
      dispatched,
      waiting,
      states,
      lastRuns,
      handoffState: settings.handoffState,
      terminalStates: settings.terminalStates,
    }),
  );
}
