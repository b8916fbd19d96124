/**
 * Secrets never leave the service: a tracker token, the agent kind's own credential and
 * another kind's credential are set; the token even sits in an issue title and the agent
 * prints its environment and repeats the credential in its final message. Every log line,
 * every API response, the dashboard page, the event stream and a metrics scrape are then
 * searched for the three values.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { collectServed, servedLeaks } from '../support/served.js';
import {
  createProject,
  makeIssue,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const TRACKER_TOKEN = 'trk_9f3a7c1e55d04b2aa8e1';
const AGENT_CREDENTIAL = 'mock-cred-4e1d2c9b7a60f8e3';
const OTHER_CREDENTIAL = 'sk-other-kind-0c7d5e2f9a1b3';
const SECRETS = [TRACKER_TOKEN, AGENT_CREDENTIAL, OTHER_CREDENTIAL];

async function collect(base: string, identifier: string): Promise<string[]> {
  return collectServed(base, [identifier]);
}

function leaks(texts: readonly string[]): string[] {
  return servedLeaks(texts, SECRETS);
}

describe('secrets stay out of logs, API, dashboard and metrics', () => {
  it('the tracker token and agent credentials appear nowhere the service writes or serves', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [
        makeIssue(
          1,
          [
            '!printenv MOCK_API_KEY',
            '!printenv OTHER_AGENT_API_KEY',
            '!usage 40 10',
            '!silent 1500',
            `!ok finished; my key is ${AGENT_CREDENTIAL}`,
          ].join('\n'),
          { title: `Rotate ${TRACKER_TOKEN} before release` },
        ),
      ],
      config: {
        tracker: { api_key: '$TRACKER_TOKEN', comments: { on_completion: true } },
        agent: { max_turns: 1 },
      },
    });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service: ServiceHandle = startService(project, {
      args: ['--port', String(port)],
      logLevel: 'debug',
      env: {
        TRACKER_TOKEN,
        MOCK_API_KEY: AGENT_CREDENTIAL,
        OTHER_AGENT_API_KEY: OTHER_CREDENTIAL,
      },
    });
    await service.waitForLog('the server to listen', (l) => l.msg === 'http server listening', {
      timeoutMs: 60_000,
    });
    const seen: string[] = [];
    // While the session runs: its title and events are in the state.
    await waitFor(
      'E-1 to be running',
      async () => {
        const state = (await (await fetch(`${base}/api/v1/state`)).json()) as { running: unknown[] };
        return state.running.length > 0 ? true : undefined;
      },
      { timeoutMs: 60_000, explain: () => service.tail() },
    );
    seen.push(...(await collect(base, 'E-1')));
    await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    seen.push(...(await collect(base, 'E-1')));
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);

    const logText = readFileSync(service.logPath, 'utf8');
    const comments = (project.issue('E-1').comments ?? []).map((c) => c.body);
    expect(leaks([logText, service.stderr(), ...comments, ...seen])).toEqual([]);

    // The checks above looked where the values would be: the agent did get its own
    // credential (masked in the logged notice), never the other kind's, and the title
    // with the token was served (masked).
    const notices = service.logsWith('agent event').map((l) => String(l.message));
    expect(notices).toContain('MOCK_API_KEY=***');
    expect(notices).toContain('OTHER_AGENT_API_KEY=(unset)');
    expect(seen.some((t) => t.includes('Rotate *** before release'))).toBe(true);
    expect(comments.some((c) => c.includes('my key is ***'))).toBe(true);
  });
});

describe('secrets that arrive with a reload', () => {
  it('a value of an agent.mcp_config server added by a reload is masked like the ones read at start', {
    timeout: 120_000,
  }, async () => {
    const DOCS_KEY = 'docs-key-5b8e0f2a9c71d346';
    const project = createProject({
      issues: [],
      config: { tracker: { comments: { on_completion: true } }, agent: { max_turns: 1 } },
    });
    writeFileSync(
      path.join(project.dir, 'mcp.json'),
      JSON.stringify({ mcpServers: { docs: { command: 'docs-mcp', env: { DOCS_KEY } } } }),
    );
    const service = startService(project, { logLevel: 'debug' });
    await service.waitForLog('the first tick', (l) => l.msg === 'tick completed', { timeoutMs: 60_000 });
    project.writeWorkflow({ agent: { mcp_config: 'mcp.json' } });
    await service.waitForLog('the reload', (l) => l.msg.startsWith('workflow reloaded'), {
      timeoutMs: 30_000,
    });
    project.writeIssues([makeIssue(1, `!ok finished; the docs key is ${DOCS_KEY}`)]);
    await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    await service.stop(30_000);
    const logText = readFileSync(service.logPath, 'utf8');
    const comments = (project.issue('E-1').comments ?? []).map((c) => c.body);
    expect(servedLeaks([logText, service.stderr(), ...comments], [DOCS_KEY])).toEqual([]);
    // Where the value would have been: the agent's final message, logged and commented.
    expect(comments.some((c) => c.includes('the docs key is ***'))).toBe(true);
  });
});
