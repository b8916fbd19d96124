/**
 * SSH workers end to end: `orchestrator run` as a real process, the file tracker, and
 * the mock runtime installed on "hosts" that are real sshd processes on 127.0.0.1,
 * each logging in as its own non-root user. The hosts share this machine's
 * filesystem, so "on the remote side" is proven by ownership: what the host made
 * belongs to the host's user, and nothing appears where a local run would put it.
 * Each host has its own user so that a user's processes are that host's processes.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { installMockAgent, type RemoteAgent } from '../support/remote-agent.js';
import {
  createProject,
  dbRuns,
  makeIssue,
  type Project,
  type ServiceHandle,
  sleep,
  startService,
  useServiceCleanup,
  waitFor,
  waitIdle,
} from '../support/service.js';
import { type SshSession, useSshHost, watchCommandLines } from '../support/ssh-session.js';
import { pollUntil, remoteProcesses, testUserName } from '../support/sshd.js';

useServiceCleanup();

const CREDENTIAL = 'mock-remote-cred-7c41e9a2d05b';

let agent: RemoteAgent;
// Each host its own user; the second authorizes the first's client key, so one key reaches both.
const hostA = useSshHost(testUserName('orchssh-e2e-a'));
const hostB = useSshHost(testUserName('orchssh-e2e-b'), { clientKeyPath: () => hostA.sshd.clientKeyPath });

beforeAll(() => {
  agent = installMockAgent();
});

/** A fresh workspace root in the user's home (a path that exists only where the host made it). */
function remoteRoot(host: SshSession, tag: string): string {
  return path.join(host.user.home, `ws-${tag}-${Date.now()}`);
}

/** The worker settings for `used` hosts, everything else as in the other e2e tests. */
function sshConfig(project: { dir: string }, used: SshSession[], root: string, command: string) {
  return {
    worker: {
      ssh_hosts: used.map((h) => h.sshd.spec),
      ssh_identity_file: hostA.sshd.clientKeyPath,
      ssh_known_hosts_file: path.join(project.dir, 'known_hosts'),
      ssh_strict_host_key_checking: 'accept-new',
    },
    workspace: { root },
    agent: { command },
    mock: { pid_log: null },
  };
}

/** Agent processes (the bundled runtime, or the wrapper's child) of a host's user; not the shells around them. */
function agentProcesses(host: SshSession): { pid: number; cmdline: string }[] {
  return remoteProcesses(host.user.name).filter(
    (p) => p.cmdline.startsWith(`${process.execPath} `) || p.cmdline === `sleep ${agent.childMarker}`,
  );
}

function newProject(
  issues: ReturnType<typeof makeIssue>[],
  used: SshSession[],
  tag: string,
  command?: string,
) {
  const project = createProject({ issues });
  const root = remoteRoot(used[0] as SshSession, tag);
  project.writeWorkflow(sshConfig(project, used, root, command ?? agent.command));
  return { project, root };
}

async function runToIdle(project: Project, env: Record<string, string> = {}): Promise<ServiceHandle> {
  const service = startService(project, { env, logLevel: 'debug' });
  await waitFor('the first tick', () => service.logsWith('tick completed').length > 0, {
    timeoutMs: 30_000,
    explain: () => service.tail(),
  });
  return service;
}

describe('SSH workers against real sshd', () => {
  it('a mock session runs on the host: workspace and hook output exist there only, the credential arrives through stdin and never in a command line or a log', {
    timeout: 120_000,
  }, async () => {
    const { project, root } = newProject(
      [
        makeIssue(
          1,
          '!printenv MOCK_API_KEY\n!printenv FORWARDED_SETTING\n!printenv LOCAL_ONLY_SETTING\n!usage 30 12\n!silent 2500\n!ok remote done',
        ),
      ],
      [hostA],
      'e2e',
    );
    project.writeWorkflow({
      hooks: { after_create: 'echo "created by $(id -u) on $ORCHESTRATOR_SSH_HOST" > hook-output.txt' },
      worker: { ssh_forward_env: ['FORWARDED_SETTING'] },
    });
    // Scan every process's command line while the service runs.
    const watch = watchCommandLines(CREDENTIAL);
    const service = await runToIdle(project, {
      MOCK_API_KEY: CREDENTIAL,
      FORWARDED_SETTING: 'sent-to-hosts',
      LOCAL_ONLY_SETTING: 'stays-here',
    });
    await waitFor('the issue handed off', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    await waitIdle(service);
    const { leaks: seenInCmdline } = await watch.stop();
    await service.stop();

    const workspace = path.join(root, 'E-1');
    expect(statSync(workspace).uid).toBe(hostA.user.uid);
    const hookOutput = readFileSync(path.join(workspace, 'hook-output.txt'), 'utf8');
    expect(hookOutput).toBe(`created by ${hostA.user.uid} on ${hostA.sshd.spec}\n`);
    expect(existsSync(project.workspaceRoot)).toBe(false);

    const runs = dbRuns(project.dbPath, 'E-1') as (ReturnType<typeof dbRuns>[number] & { host: string })[];
    expect(runs.map((r) => [r.host, r.exit_kind, r.workspace])).toEqual([
      [hostA.sshd.spec, 'succeeded', workspace],
    ]);
    expect(runs[0]?.total_tokens).toBe(42);

    // It arrived (the notice is logged, masked) and leaked nowhere.
    const log = readFileSync(service.logPath, 'utf8');
    expect(log).toContain('MOCK_API_KEY=***');
    // Only what the workflow forwards travels besides the credential.
    expect(log).toContain('FORWARDED_SETTING=sent-to-hosts');
    expect(log).toContain('LOCAL_ONLY_SETTING=(unset)');
    expect(log).not.toContain(CREDENTIAL);
    expect(seenInCmdline).toEqual([]);
    // accept-new recorded the host key in the managed file.
    expect(readFileSync(path.join(project.dir, 'known_hosts'), 'utf8')).toContain(hostA.sshd.hostPublicKey);
  });

  it('a turn timeout and a cancel leave no process of the agent on the host, including a child it started', {
    timeout: 120_000,
  }, async () => {
    const { project } = newProject(
      [makeIssue(1, '!abort'), makeIssue(2, '!abort')],
      [hostA],
      'kill',
      agent.withChildCommand,
    );
    project.writeWorkflow({
      agent: { turn_timeout_ms: 4_000, max_retry_backoff_ms: 120_000, stall_timeout_ms: 0 },
      tracker: { active_states: ['Todo', 'In Progress'] },
    });
    project.editIssue('E-2', { state: 'Backlog' });
    const service = await runToIdle(project);

    // Turn timeout: E-1's agent and its child run, then the timer ends the turn.
    await waitFor('the agent and its child on the host', () => agentProcesses(hostA).length >= 2, {
      timeoutMs: 30_000,
      explain: () => service.tail(),
    });
    await waitFor(
      'the turn timeout',
      () =>
        service
          .logsWith('turn ended')
          .find((l) => l.issue_identifier === 'E-1' && l.error_kind === 'turn_timeout'),
      { timeoutMs: 30_000, explain: () => service.tail() },
    );
    expect(await pollUntil(() => agentProcesses(hostA).length === 0, 10_000)).toBe(true);

    // Cancel: E-2 starts, then leaves the active states; reconciliation cancels the turn.
    project.editIssue('E-2', { state: 'Todo' });
    await waitFor(
      'E-2 running on the host',
      () =>
        agentProcesses(hostA).length >= 2 &&
        service.logsWith('dispatching').some((l) => l.issue_identifier === 'E-2'),
      { timeoutMs: 30_000, explain: () => service.tail() },
    );
    project.editIssue('E-2', { state: 'Backlog' });
    await waitFor(
      'the cancelled turn',
      () => service.logsWith('worker exited').find((l) => l.issue_identifier === 'E-2'),
      { timeoutMs: 30_000, explain: () => service.tail() },
    );
    expect(await pollUntil(() => agentProcesses(hostA).length === 0, 10_000)).toBe(true);
    expect(agentProcesses(hostA)).toEqual([]);
    await service.stop();
  });

  it('an orchestrator killed with SIGKILL mid-turn leaves nothing on the host: the watcher ends the group when the connection drops', {
    timeout: 120_000,
  }, async () => {
    const { project } = newProject([makeIssue(1, '!abort')], [hostA], 'crash', agent.withChildCommand);
    const service = await runToIdle(project);
    await waitFor(
      'the agent and its child on the host',
      () => service.logsWith('agent session started').length > 0 && agentProcesses(hostA).length >= 2,
      { timeoutMs: 30_000, explain: () => service.tail() },
    );
    service.kill('SIGKILL');
    await service.waitExit(10_000);
    // No stop, no cancel: only the dropped connection can end them.
    expect(await pollUntil(() => agentProcesses(hostA).length === 0, 10_000)).toBe(true);
  });

  it('with host key checking "yes", a host missing from known_hosts is refused and marked down; its issue runs on the known host', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({ issues: [1, 2].map((n) => makeIssue(n, '!silent 1500\n!ok done')) });
    const root = path.join(project.dir, 'remote-workspaces');
    mkdirSync(root);
    chmodSync(project.dir, 0o755);
    chmodSync(root, 0o1777);
    const knownHosts = path.join(project.dir, 'known_hosts');
    writeFileSync(knownHosts, `${hostB.sshd.knownHostsLine()}\n`);
    const config = sshConfig(project, [hostA, hostB], root, agent.command);
    project.writeWorkflow({
      ...config,
      worker: { ...config.worker, ssh_strict_host_key_checking: 'yes', max_concurrent_agents_per_host: 1 },
      agent: { command: agent.command, max_retry_backoff_ms: 1_000 },
    });
    const service = await runToIdle(project);
    await waitFor('both issues handed off', () => project.readIssues().every((i) => i.state === 'Review'), {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    await service.stop();

    const runs = dbRuns(project.dbPath) as (ReturnType<typeof dbRuns>[number] & { host: string })[];
    const refused = runs.filter((r) => r.host === hostA.sshd.spec);
    expect(refused.length).toBeGreaterThan(0);
    for (const run of refused) {
      expect(run.error_kind).toBe('host_unreachable');
      expect(run.error).toContain('host key');
    }
    expect(runs.filter((r) => r.exit_kind === 'succeeded').map((r) => r.host)).toEqual([
      hostB.sshd.spec,
      hostB.sshd.spec,
    ]);
    expect(
      service.logsWith('SSH host marked down; its work goes to other hosts').map((l) => l.host),
    ).toContain(hostA.sshd.spec);
    // "yes" never writes the file.
    expect(readFileSync(knownHosts, 'utf8')).toBe(`${hostB.sshd.knownHostsLine()}\n`);
  });

  it('at start, the workspace of an issue that became terminal meanwhile is removed on its host, before_remove running there', {
    timeout: 120_000,
  }, async () => {
    const { project, root } = newProject([makeIssue(1, '!ok', { state: 'Done' })], [hostA], 'sweep');
    const trace = path.join(project.dir, 'removals');
    mkdirSync(trace);
    chmodSync(project.dir, 0o755);
    chmodSync(trace, 0o1777);
    project.writeWorkflow({
      hooks: { before_remove: `echo "$(id -u) $ORCHESTRATOR_SSH_HOST $(basename "$PWD")" >> ${trace}/log` },
    });
    // The workspace a run on the host left behind, owned by the host's user.
    for (const dir of [root, path.join(root, 'E-1')]) {
      mkdirSync(dir);
      chownSync(dir, hostA.user.uid, -1);
    }
    const service = await runToIdle(project);
    await waitFor(
      'the sweep',
      () => service.logsWith('removed the workspace of a terminal issue').length > 0,
      {
        timeoutMs: 30_000,
        explain: () => service.tail(),
      },
    );
    await service.stop();
    expect(existsSync(path.join(root, 'E-1'))).toBe(false);
    expect(readFileSync(path.join(trace, 'log'), 'utf8')).toBe(`${hostA.user.uid} ${hostA.sshd.spec} E-1\n`);
  });

  it('two hosts with a cap of one each run three issues one per host at a time; a host that goes down sends its retry to the other', {
    timeout: 180_000,
  }, async () => {
    const issues = [1, 2, 3].map((n) => makeIssue(n, '!silent 6000\n!ok done'));
    const project = createProject({ issues });
    // The same absolute root on every host, as an operator configures it. The two hosts
    // share this filesystem, so the root is made writable for both users up front.
    const root = path.join(project.dir, 'remote-workspaces');
    mkdirSync(root);
    chmodSync(project.dir, 0o755);
    chmodSync(root, 0o1777);
    const config = sshConfig(project, [hostA, hostB], root, agent.command);
    const port = await freePort();
    project.writeWorkflow({
      ...config,
      worker: { ...config.worker, max_concurrent_agents_per_host: 1 },
      agent: { command: agent.command, max_retry_backoff_ms: 1_000 },
      server: { port },
    });

    // The most agent processes seen at once per host, with what they were (for a failure message).
    const most = new Map<SshSession, { pid: number; cmdline: string }[]>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const host of [hostA, hostB]) {
          const seen = agentProcesses(host);
          if (seen.length > (most.get(host)?.length ?? 0)) most.set(host, seen);
        }
        await sleep(30);
      }
    })();
    const service = await runToIdle(project);
    // Both hosts busy: stop host A while its session runs.
    // A session (not a credential check) started on each host, and its agent runs there.
    const sessionOn = (host: SshSession) =>
      service.logsWith('agent session started').some((l) => l.host === host.sshd.spec) &&
      agentProcesses(host).length === 1;
    await waitFor('a session on each host', () => sessionOn(hostA) && sessionOn(hostB), {
      timeoutMs: 30_000,
      explain: () => service.tail(),
    });
    const onA = service.logsWith('dispatching').find((l) => l.host === hostA.sshd.spec)
      ?.issue_identifier as string;
    expect(onA).toBeDefined();
    await hostA.sshd.stop();

    await waitFor(
      'all three issues handed off',
      () => project.readIssues().every((i) => i.state === 'Review'),
      {
        timeoutMs: 120_000,
        explain: () => service.tail(),
      },
    );
    sampling = false;
    await sampler;
    await service.stop();

    expect(most.get(hostA)).toHaveLength(1);
    expect(most.get(hostB)).toHaveLength(1);
    const runs = dbRuns(project.dbPath, onA) as (ReturnType<typeof dbRuns>[number] & { host: string })[];
    expect(runs[0]?.host).toBe(hostA.sshd.spec);
    expect(runs[0]?.exit_kind).toBe('failed');
    const last = runs[runs.length - 1];
    expect(last?.host).toBe(hostB.sshd.spec);
    expect(last?.exit_kind).toBe('succeeded');
    // The host's session died with the connection: nothing of the agent is left there.
    expect(await pollUntil(() => agentProcesses(hostA).length === 0, 10_000)).toBe(true);
    // Bring host A back for any later test.
    await hostA.restart();
  });
});
