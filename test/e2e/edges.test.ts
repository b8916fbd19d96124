/**
 * `orchestrator run` at the edges of legal input: workflows without active states,
 * identifiers that sanitise alike or look like paths, holds a workflow fix should end,
 * and templates that `validate` refuses. The real CLI in a child process, the `file`
 * tracker and the `mock` runtime; every wait is on a condition with a deadline.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  createProject,
  dbRuns,
  makeIssue,
  type Project,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const runsDone = (project: Project, identifier: string, n: number, service: ServiceHandle) =>
  waitFor(
    `${n} finished run(s) of ${identifier}`,
    () => {
      const runs = dbRuns(project.dbPath, identifier).filter((r) => r.ended_at !== null);
      return runs.length >= n ? runs : undefined;
    },
    { timeoutMs: 60_000, explain: () => `${service.tail()}\n${JSON.stringify(dbRuns(project.dbPath))}` },
  );

describe('active states', () => {
  it('a workflow without active_states does not start, so a handed-off issue cannot be dispatched again in a loop', {
    timeout: 60_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!ok'), makeIssue(2, '!ok', { state: 'Review' })],
      config: { tracker: { active_states: null } },
    });
    const service = startService(project);
    const exit = await service.waitExit(30_000);
    expect(exit?.code, service.tail()).toBe(1);
    expect(service.stderr()).toContain('tracker.active_states.missing');
    expect(dbRuns(project.dbPath)).toEqual([]);

    const validate = runCli(['validate', project.workflowPath]);
    expect(validate.status).toBe(1);
    expect(validate.stdout).toContain('tracker.active_states.missing');
  });

  it('--dry-run never marks the handoff, blocked or an unlisted state for dispatch', () => {
    const project = createProject({
      issues: [
        makeIssue(1, '!ok'),
        makeIssue(2, '!ok', { state: 'Review' }),
        makeIssue(3, '!ok', { state: 'Blocked' }),
        makeIssue(4, '!ok', { state: 'Backlog' }),
      ],
    });
    const dry = runCli(['run', '--dry-run', project.workflowPath]);
    expect(dry.status, dry.stderr).toBe(0);
    const line = (id: string) => dry.stdout.split('\n').find((l) => l.includes(id)) ?? '';
    expect(line('E-1')).toContain('dispatch');
    // The tracker does not even offer them as candidates; when listed, they are not_active.
    for (const id of ['E-2', 'E-3', 'E-4']) expect(line(id)).not.toMatch(/\bdispatch\b/);
  });
});

describe('workspace keys', () => {
  it('A/B, A_B, A:B and A B run at once in four workspaces; A/B going to Done removes only its own', {
    timeout: 120_000,
  }, async () => {
    const identifiers = ['A/B', 'A_B', 'A:B', 'A B'];
    const project = createProject({
      issues: identifiers.map((identifier, i) => makeIssue(i + 1, '!abort', { identifier })),
      config: {
        agent: { max_concurrent_agents: 4 },
        hooks: { after_create: 'printf "%s" "$ORCHESTRATOR_ISSUE_IDENTIFIER" > owner' },
      },
    });
    const service = startService(project);
    const live = await waitFor(
      'four live runs with their workspaces',
      () => {
        const runs = dbRuns(project.dbPath).filter((r) => r.ended_at === null && r.workspace !== '');
        return runs.length === 4 ? runs : undefined;
      },
      { timeoutMs: 60_000, explain: () => service.tail() },
    );
    const byIdentifier = new Map(live.map((r) => [r.identifier, r.workspace]));
    expect(new Set(byIdentifier.values()).size).toBe(4);
    for (const [identifier, workspace] of byIdentifier) {
      expect(path.dirname(workspace)).toBe(project.workspaceRoot);
      expect(readFileSync(path.join(workspace, 'owner'), 'utf8')).toBe(identifier);
    }
    expect(byIdentifier.get('A_B')).toBe(path.join(project.workspaceRoot, 'A_B'));

    project.editIssue('A/B', { state: 'Done' });
    await runsDone(project, 'A/B', 1, service);
    await waitFor('A/B workspace removed', () => !existsSync(byIdentifier.get('A/B') as string), {
      explain: () => service.tail(),
    });
    for (const identifier of ['A_B', 'A:B', 'A B']) {
      expect(readFileSync(path.join(byIdentifier.get(identifier) as string, 'owner'), 'utf8')).toBe(
        identifier,
      );
      expect(dbRuns(project.dbPath, identifier).filter((r) => r.ended_at === null)).toHaveLength(1);
    }
    const stopped = await service.stop(30_000);
    expect(stopped.code).toBe(0);
  });

  it('../../etc runs in a direct child of the root and nothing is made outside it', {
    timeout: 90_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!ok', { identifier: '../../etc' })] });
    const service = startService(project);
    const [run] = await runsDone(project, '../../etc', 1, service);
    expect(run?.exit_kind, service.tail()).toBe('succeeded');
    expect(path.dirname(run?.workspace ?? '')).toBe(project.workspaceRoot);
    expect(readdirSync(path.dirname(project.dir)).filter((n) => n === 'etc')).toEqual([]);
    expect(existsSync(path.join(project.dir, 'etc'))).toBe(false);
    await service.stop(30_000);
  });
});

describe('held issues and the workflow', () => {
  it('an issue held for a missing agent command runs again once WORKFLOW.md is fixed, without editing the issue', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!ok fixed')],
      config: { agent: { command: `${path.sep}nonexistent${path.sep}agent --flag` } },
    });
    const service = startService(project);
    const [failed] = await runsDone(project, 'E-1', 1, service);
    expect(failed?.error_kind, service.tail()).toBe('agent_not_found');
    await service.waitForLog('the hold', (l) => l.msg.startsWith('issue held'));
    project.writeWorkflow({ agent: { command: null } });
    const runs = await runsDone(project, 'E-1', 2, service);
    expect(runs.map((r) => r.exit_kind)).toEqual(['failed', 'succeeded']);
    expect(
      service.logsWith('workflow changed since the issue was held; it may be dispatched again'),
    ).toHaveLength(1);
    // The run row closes before the handoff's tracker write, so the state is waited for.
    await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 30_000,
      explain: () => service.tail(),
    });
    await service.stop(30_000);
  });

  it('run refuses a template that validate refuses (an unknown variable), before anything is dispatched', {
    timeout: 60_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!ok')],
      prompt: 'Work on {{ issue.nonexistent }}.\n',
    });
    const service = startService(project);
    const exit = await service.waitExit(30_000);
    expect(exit?.code, service.tail()).toBe(1);
    expect(service.stderr()).toContain('template.unknown_variable');
    expect(dbRuns(project.dbPath)).toEqual([]);
    const dry = runCli(['run', '--dry-run', project.workflowPath]);
    expect(dry.status).toBe(1);
    expect(dry.stderr).toContain('template.unknown_variable');
  });
});
