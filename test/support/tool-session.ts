/**
 * The tool-server case every kind's real CLI runs through the whole service: one issue, a
 * model that asks for three of our tools in a row (a comment, a transition to a state the
 * workflow does not name, run_status), then ends its turn. A kind's test supplies the model's
 * dialect and what its runtime needs; the checks every kind must pass live here.
 */
import { expect } from 'vitest';
import { freePort } from './ports.js';
import {
  createProject,
  dbRuns,
  type Project,
  type RunRow,
  type ServiceHandle,
  startService,
  waitFor,
} from './service.js';

/** What the agent writes through `tracker_comment`. */
export const TOOL_COMMENT = 'Progress note from the agent.';
/** A state no workflow of these tests names. */
export const UNCONFIGURED_STATE = 'Shipped';

/** The calls the model asks for, in order, by our tools' names (a runtime may prefix them). */
export const TOOL_CALLS: readonly { tool: string; input: Record<string, unknown> }[] = [
  { tool: 'tracker_comment', input: { body: TOOL_COMMENT } },
  { tool: 'tracker_transition', input: { state: UNCONFIGURED_STATE } },
  { tool: 'run_status', input: {} },
];

/** The figures `run_status` returns. */
export interface RunStatusFigures {
  issue_identifier: string;
  run_id: number;
  turn: number;
  elapsed_ms: number;
  tokens: { input: number; output: number; total: number };
  cost_usd: number | null;
  budgets: { name: string; used: number; limit: number; left: number }[];
}

export interface ToolCase {
  project: Project;
  service: ServiceHandle;
  port: number;
  explain(): string;
}

/** The one issue of the case. */
export const TOOL_ISSUE = 'T-1';

/**
 * Starts the service on a one-issue project: `config` is merged over the test defaults (give
 * `agent` and the kind's block), `env` is the service's environment.
 */
export async function startToolCase(
  config: Record<string, unknown>,
  env: Record<string, string>,
  explainMore: () => string = () => '',
): Promise<ToolCase> {
  const project = createProject({
    issues: [{ id: '1', identifier: TOOL_ISSUE, title: 'Use the tools', state: 'Todo', description: 'Go.' }],
    config: { mock: null, ...config },
  });
  const port = await freePort();
  const service = startService(project, { env, args: ['--port', String(port)] });
  return { project, service, port, explain: () => `${service.tail(40)}\n${explainMore()}` };
}

/**
 * Waits for the handoff, then checks what every kind must show: the comment is on the issue
 * once, the transition was refused naming the state, run_status gave this run's turn and
 * budgets, and each call was logged, recorded for the run in the API and counted in the
 * metrics. `results` is what the three calls returned to the model, in order, each as text
 * holding the tool's answer. Returns run_status's figures and the run's row.
 */
export async function expectToolCase(
  c: ToolCase,
  results: () => readonly string[],
): Promise<{ figures: RunStatusFigures; run: RunRow }> {
  await waitFor('the handoff', () => c.project.issue(TOOL_ISSUE).state === 'Review', {
    timeoutMs: 150_000,
    explain: c.explain,
  });
  const comments = (c.project.issue(TOOL_ISSUE).comments ?? []).filter((m) => m.body === TOOL_COMMENT);
  expect(comments, c.explain()).toHaveLength(1);

  const answered = results();
  expect(answered, c.explain()).toHaveLength(3);
  const [commented, refused, status] = answered as [string, string, string];
  expect(commented).toMatch(/"commented"\s*:\s*true|\\"commented\\"\s*:\s*true/);
  expect(refused).toMatch(/tool_state_not_configured/);
  expect(refused).toContain(UNCONFIGURED_STATE);
  const figures = parseFigures(status);
  expect(figures).toMatchObject({ issue_identifier: TOOL_ISSUE, turn: 1 });
  expect(figures.elapsed_ms).toBeGreaterThan(0);

  const [run] = dbRuns(c.project.dbPath);
  expect(run, c.explain()).toMatchObject({ exit_kind: 'succeeded', turns: 1, id: figures.run_id });
  const row = run as RunRow;
  expect(figures.elapsed_ms).toBeLessThan(Date.parse(row.ended_at as string) - Date.parse(row.started_at));
  expect(figures.budgets[0]).toEqual({ name: 'max_turns', used: 1, limit: 1, left: 0 });

  const logged = c.service
    .logs()
    .filter((l) => l.msg === 'tool call' || l.msg === 'tool call refused or failed');
  expect(logged.map((l) => [l.tool, l.outcome])).toEqual([
    ['tracker_comment', 'ok'],
    ['tracker_transition', 'tool_state_not_configured'],
    ['run_status', 'ok'],
  ]);
  const issue = (await (await fetch(`http://127.0.0.1:${c.port}/api/v1/issues/${TOOL_ISSUE}`)).json()) as {
    runs: { tool_calls: unknown }[];
  };
  expect(issue.runs[0]?.tool_calls).toEqual([
    { tool: 'run_status', outcome: 'ok', calls: 1 },
    { tool: 'tracker_comment', outcome: 'ok', calls: 1 },
    { tool: 'tracker_transition', outcome: 'tool_state_not_configured', calls: 1 },
  ]);
  const metrics = await (await fetch(`http://127.0.0.1:${c.port}/metrics`)).text();
  expect(metrics).toContain('orchestrator_tool_server_calls_total{tool="tracker_comment",outcome="ok"} 1');
  expect(metrics).toContain(
    'orchestrator_tool_server_calls_total{tool="tracker_transition",outcome="tool_state_not_configured"} 1',
  );
  return { figures, run: row };
}

/** The figures in a tool answer: the JSON object inside, however many times the runtime wrapped it as a string. */
export function parseFigures(text: string): RunStatusFigures {
  let value: unknown = text;
  for (let depth = 0; depth < 4 && typeof value === 'string'; depth++) {
    const s = value;
    const start = s.indexOf('{"issue_identifier"');
    const escaped = s.indexOf('{\\"issue_identifier\\"');
    if (start >= 0) value = JSON.parse(balanced(s, start));
    else if (escaped >= 0) value = s.replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    else throw new Error(`no run_status figures in: ${s.slice(0, 300)}`);
  }
  return value as RunStatusFigures;
}

/** The JSON object starting at `start`, up to its matching brace. */
function balanced(s: string, start: number): string {
  let depth = 0;
  let inString = false;
  for (let i = start; i < s.length; i++) {
    const ch = s[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return s.slice(start, i + 1);
  }
  throw new Error(`unbalanced JSON in: ${s.slice(start, start + 300)}`);
}

/** What the agent asks through `ask_human` in the parking case. */
export const ASK_HUMAN_QUESTION = 'Should the tool call the staging or the production API?';

/**
 * The parking case every kind shows the same way: the issue reaches the blocked state, the
 * question is on it once (the blocked exit posts no second copy), and the session stopped after
 * the turn that asked, though `max_turns` allowed more.
 */
export async function expectAskHumanCase(c: ToolCase): Promise<void> {
  await waitFor('the issue parked', () => c.project.issue(TOOL_ISSUE).state === 'Blocked', {
    timeoutMs: 150_000,
    explain: c.explain,
  });
  const comments = c.project.issue(TOOL_ISSUE).comments ?? [];
  expect(
    comments.filter((m) => m.body.includes(ASK_HUMAN_QUESTION)),
    c.explain(),
  ).toEqual([expect.objectContaining({ body: `The agent asks:\n\n${ASK_HUMAN_QUESTION}` })]);
  const [run] = dbRuns(c.project.dbPath);
  expect(run).toMatchObject({ exit_kind: 'blocked', turns: 1 });
}
