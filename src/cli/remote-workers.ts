/**
 * Builds the SSH workers from `worker.*`: one connection registry, one workspace
 * manager per host, and the environment an agent on a host gets. Host settings
 * other than the host list and the per-host cap are read once, at start.
 */
import os from 'node:os';
import type { RemoteHost } from '../domain/remote.js';
import type { RemoteWorkers, Workspaces } from '../orchestrator/ports.js';
import { SshHosts } from '../ssh/index.js';
import type { ServiceConfig } from '../workflow/config.js';
import type { LegacyOwnerCheck } from '../workspace/lifecycle.js';
import type { HookResult } from '../workspace/manager.js';
import { RemoteWorkspaceManager } from '../workspace/remote.js';

export interface RemoteWorkersParams {
  config: ServiceConfig;
  env: NodeJS.ProcessEnv;
  agentEnv: Record<string, string>;
  /** The service's owner tag, for the hooks' environment (the agents get it through `agentEnv`). */
  ownerTag?: string;
  onHook: (event: { hook: string; issueIdentifier: string; result: HookResult }) => void;
  warn: (message: string, fields: Record<string, unknown>) => void;
  /** Whether an old-named workspace on a host was the issue's own. */
  ownsLegacy?: LegacyOwnerCheck;
}

/** The SSH workers and a `close` that ends their connections. */
export function createRemoteWorkers(params: RemoteWorkersParams): RemoteWorkers & { close(): Promise<void> } {
  const { worker } = params.config;
  const hosts = new SshHosts({
    strictHostKeyChecking: worker.sshStrictHostKeyChecking,
    knownHostsFile: worker.knownHostsFile,
    identityFile: worker.identityFile,
    agentSocket: params.env.SSH_AUTH_SOCK ?? null,
    defaultUser: worker.user ?? os.userInfo().username,
    connectTimeoutMs: worker.connectTimeoutMs,
    onWarn: params.warn,
  });
  const managers = new Map<RemoteHost, Workspaces>();
  return {
    host: (name) => hosts.host(name),
    workspaces: (host) => {
      let manager = managers.get(host);
      if (manager === undefined) {
        manager = new RemoteWorkspaceManager({
          host,
          root: params.config.workspaceRoot,
          hooks: params.config.hooks,
          onHook: params.onHook,
          ownsLegacy: params.ownsLegacy,
          ownerTag: params.ownerTag,
        });
        managers.set(host, manager);
      }
      return manager;
    },
    agentEnv: params.agentEnv,
    close: () => hosts.close(),
  };
}
