/**
 * The agents' tools for a session on an SSH host: the whole service, the pinned Claude Code
 * copied to a host that is a real sshd on 127.0.0.1 (its own non-root user), driven by the
 * fake model server. The host has no `orchestrator mcp-server`: the service forwards a port
 * on the host's loopback back to its tool endpoint, and the CLI speaks HTTP to it with the
 * session's token, which travels in the session env (over the channel's stdin) and never in
 * a command line. The checks every kind must pass are the local case's
 * (test/support/tool-session.ts).
 */
import { randomBytes } from 'node:crypto';
import { chownSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLAUDE_CLI,
  CLAUDE_INSTALL_DIR,
  REAL_CLI_MODEL,
  realCliEnv,
  realCliPlan,
  toolCaseScript,
  toolResults,
} from '../agent/claude-code/support.js';
import { anthropicDialect } from '../support/fake-model/anthropic.js';
import { FakeModelServer } from '../support/fake-model/server.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import { installRealCli, type RemoteCli } from '../support/remote-agent.js';
import { useServiceCleanup } from '../support/service.js';
import { userProcesses, useSshHost, watchCommandLines } from '../support/ssh-session.js';
import { testUserName } from '../support/sshd.js';
import { expectToolCase, startToolCase, TOOL_CALLS } from '../support/tool-session.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`tools over SSH with the real Claude Code skipped: ${plan.reason}`);

useServiceCleanup();

const USER = testUserName('orchssh-tools');
const API_KEY = `sk-ant-tools-${randomBytes(12).toString('hex')}`;
const TOKEN_VAR = 'ORCHESTRATOR_TOOLS_TOKEN';
const ssh = useSshHost(USER, { skip: !plan.run });
let model: FakeModelServer;
let cli: RemoteCli;

beforeAll(async () => {
  if (!plan.run) return;
  model = await FakeModelServer.start([anthropicDialect(toolCaseScript)]);
  // The key goes in the service's env (the session env, over stdin); the rest in the wrapper,
  // except PATH (the host login's). HOME is fresh, and the host user's.
  const { ANTHROPIC_API_KEY: _key, PATH: _path, ...settings } = realCliEnv(model.url);
  chownSync(settings.HOME as string, ssh.user.uid, statSync(ssh.user.home).gid);
  cli = installRealCli(CLAUDE_INSTALL_DIR, path.relative(CLAUDE_INSTALL_DIR, CLAUDE_CLI), settings);
}, 120_000);

afterAll(async () => {
  await model?.close();
  cli?.remove();
});

describe.skipIf(!plan.run)('the tool server for a session on an SSH host', () => {
  itHasThePinnedCli(CLAUDE_CLI);

  it('claude on the host reaches our tools through the forwarded port: the comment lands, the unconfigured state is refused, run_status gives its run', {
    timeout: 180_000,
  }, async () => {
    const root = path.join(ssh.user.home, `ws-tools-${Date.now()}`);
    // The CLI's processes: every command line is read for the key, and each CLI's token variable noted.
    const watch = watchCommandLines(API_KEY, {
      noting: () => userProcesses(USER).filter((p) => p.cmdline.startsWith(`${cli.dir}/`)),
      vars: [TOKEN_VAR],
    });
    const c = await startToolCase(
      {
        agent: {
          kind: 'claude-code',
          command: cli.command,
          max_turns: 1,
          stall_timeout_ms: 60_000,
          turn_timeout_ms: 120_000,
        },
        'claude-code': { model: REAL_CLI_MODEL },
        worker: {
          ssh_hosts: [ssh.sshd.spec],
          ssh_identity_file: ssh.sshd.clientKeyPath,
          ssh_strict_host_key_checking: 'accept-new',
        },
        workspace: { root },
      },
      { ANTHROPIC_API_KEY: API_KEY },
      () => `model requests: ${model.requests.length}`,
    );
    await expectToolCase(
      c,
      () => model.requests.map(toolResults).find((r) => r.length === TOOL_CALLS.length) ?? [],
    );
    const scan = await watch.stop();
    expect(scan.leaks, 'the key appeared in a command line').toEqual([]);

    // It ran on the host, in the workspace the host's user made.
    expect(statSync(path.join(root, 'T-1')).uid).toBe(ssh.user.uid);
    const withConfig = scan.seen.filter((p) => p.cmdline.includes('--mcp-config'));
    expect(withConfig.length, JSON.stringify(scan.seen)).toBeGreaterThan(0);
    const starting = c.service.logs().find((l) => l.msg === 'orchestrator starting');
    const endpointPort = Number(new URL(String(starting?.tool_endpoint)).port);
    expect(endpointPort).toBeGreaterThan(0);
    for (const p of withConfig) {
      // HTTP to a port on the host's loopback that is not the service's own (a forward), the
      // token by reference: its value is in the CLI's environment, never in its command line.
      const url = /"url":"(http:\/\/127\.0\.0\.1:(\d+)\/mcp)"/.exec(p.cmdline);
      expect(url, p.cmdline).not.toBeNull();
      expect(Number(url?.[2])).not.toBe(endpointPort);
      expect(p.cmdline).toContain(`\${${TOKEN_VAR}}`);
      const token = p.env[TOKEN_VAR] ?? '';
      expect(token.length).toBeGreaterThan(30);
      expect(p.cmdline).not.toContain(token);
    }
  });
});
