/**
 * The HTTP API against a real server on a loopback port, a real SQLite store and a real
 * config: every route, its shape, and every error the envelope promises.
 */
import { describe, expect, it } from 'vitest';
import {
  expectJsonHeaders,
  getJson,
  MASKED,
  request,
  runningEntry,
  SECRETS,
  started,
  T0,
} from './support.js';

const TOKENS_KEYS = [
  'cache_read_tokens',
  'cache_write_tokens',
  'input_tokens',
  'output_tokens',
  'total_tokens',
];

describe('GET /livez', () => {
  it('passes while the service runs', async () => {
    const s = await started();
    const res = await getJson(`${s.url}/livez`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'pass' });
  });

  it('fails with 503 once the service drains, so a supervisor stops routing to it', async () => {
    const s = await started((h) => {
      h.snapshot.draining = true;
    });
    const res = await getJson(`${s.url}/livez`);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: 'fail' });
  });
});

describe('GET /readyz', () => {
  it('is not ready before the first tick finished', async () => {
    const s = await started();
    const res = await getJson(`${s.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      status: 'fail',
      version: '9.8.7',
      uptime_seconds: 3600,
      checks: {
        database: 'pass',
        store_writes: 'pass',
        first_tick: 'fail',
        workflow: 'pass',
        draining: 'pass',
      },
    });
  });

  it('is ready once the first tick finished and the database answers', async () => {
    const s = await started();
    s.snapshot.ticks = 1;
    const res = await getJson(`${s.url}/readyz`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      status: 'pass',
      checks: {
        database: 'pass',
        store_writes: 'pass',
        first_tick: 'pass',
        workflow: 'pass',
        draining: 'pass',
      },
    });
  });

  it('is not ready when the database is closed, even after ticks', async () => {
    const s = await started((h) => {
      h.snapshot.ticks = 3;
    });
    s.store.close();
    const res = await getJson(`${s.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ status: 'fail', checks: { database: 'fail', first_tick: 'pass' } });
  });

  it('is not ready while draining', async () => {
    const s = await started((h) => {
      h.snapshot.ticks = 3;
      h.snapshot.draining = true;
    });
    const res = await getJson(`${s.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ status: 'fail', checks: { draining: 'fail', first_tick: 'pass' } });
  });

  it('reports failing checks rather than an error when the snapshot throws', async () => {
    const s = await started();
    s.sources.snapshot = () => {
      throw new Error('owner gone');
    };
    const res = await getJson(`${s.url}/readyz`);
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ checks: { first_tick: 'fail', draining: 'fail', database: 'pass' } });
  });
});

describe('GET /api/v1/state', () => {
  it('has every documented field, running sessions, retries, totals, config and adapters', async () => {
    const s = await started((h) => {
      h.snapshot.ticks = 1;
      h.snapshot.held = [
        {
          issueId: 'issue-9',
          identifier: 'ENG-9',
          error: 'credential_unverified: refused',
          errorKind: 'credential_unverified',
          releasedBy: 'issue_or_workflow_change',
        },
      ];
      h.snapshot.hosts = [
        { host: 'ci@build-1:2222', running: 1, cap: 2, down: null, configured: true },
        {
          host: 'build-2',
          running: 0,
          cap: 2,
          down: { reason: 'refused', untilMs: T0 + 5_000 },
          configured: false,
        },
      ];
    });
    const { status, json } = await getJson(`${s.url}/api/v1/state`);
    expect(status).toBe(200);
    expect(Object.keys(json).sort()).toEqual(
      [
        'adapters',
        'config',
        'counts',
        'draining',
        'generated_at',
        'held',
        'rate_limits',
        'ready',
        'retrying',
        'running',
        'slots',
        'ssh_hosts',
        'store',
        'tokens_by_model_since_start',
        'totals',
        'uptime_seconds',
        'version',
        'waiting',
      ].sort(),
    );
    expect(json).toMatchObject({
      generated_at: new Date(T0).toISOString(),
      version: '9.8.7',
      uptime_seconds: 3600,
      ready: true,
      draining: false,
      counts: { running: 1, retrying: 1, waiting: 0 },
      slots: { max: 3, available: 2 },
      waiting: [],
      held: [
        {
          issue_id: 'issue-9',
          issue_identifier: 'ENG-9',
          error: 'credential_unverified: refused',
          error_kind: 'credential_unverified',
          released_by: 'issue_or_workflow_change',
        },
      ],
      ssh_hosts: [
        { host: 'ci@build-1:2222', running: 1, cap: 2, down: null, configured: true },
        {
          host: 'build-2',
          running: 0,
          cap: 2,
          down: { reason: 'refused', retry_at: new Date(T0 + 5_000).toISOString() },
          configured: false,
        },
      ],
      tokens_by_model_since_start: {},
      rate_limits: [],
      adapters: [{ kind: 'mock', runnable: true, version: '1.0.0', health: 'builtin', detail: 'built in' }],
    });
    expect(json.running).toEqual([
      {
        issue_id: 'issue-2',
        issue_identifier: 'ENG-2',
        title: 'Title of ENG-2',
        state: 'In Progress',
        attempt: 1,
        run_id: s.runs.eng2Open,
        host: 'local',
        session_id: 'sess-running',
        turn: 2,
        started_at: new Date(T0 - 90_000).toISOString(),
        elapsed_seconds: 90,
        last_event: 'token_usage',
        last_event_at: new Date(T0 - 5_000).toISOString(),
        workspace: '/tmp/ws/ENG-2',
        tokens: {
          input_tokens: 3_000,
          output_tokens: 400,
          cache_read_tokens: 1_000,
          cache_write_tokens: 100,
          total_tokens: 3_400,
        },
        tokens_by_model: {
          'model-a': {
            input_tokens: 2_000,
            output_tokens: 300,
            cache_read_tokens: 1_000,
            cache_write_tokens: 100,
            total_tokens: 2_300,
          },
          'model-b': {
            input_tokens: 1_000,
            output_tokens: 100,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            total_tokens: 1_100,
          },
        },
        cost_usd: 0.12,
        provenance: 'reported',
      },
    ]);
    expect(json.retrying).toEqual([
      {
        issue_id: 'issue-3',
        issue_identifier: 'ENG-3',
        attempt: 2,
        due_at: new Date(T0 + 42_500).toISOString(),
        due_in_seconds: 43,
        reason: 'stall',
        last_error: 'stalled',
        previous_host: 'local',
      },
    ]);
    expect(json.totals).toEqual({
      dispatches_since_start: 2,
      runs_started: 4,
      runs_finished: 3,
      // 321 s of finished runs in the store plus the running session's 90 s.
      seconds_running: 411,
      tokens: {
        input_tokens: 10_000,
        output_tokens: 2_000,
        cache_read_tokens: 500,
        cache_write_tokens: 20,
        total_tokens: 12_000,
      },
      // ENG-1's first run could not be priced: the total is unknown, the known part is kept apart.
      cost_usd: null,
      known_cost_usd: 1.234567,
      unpriced_runs: 1,
      active_tokens: {
        input_tokens: 3_000,
        output_tokens: 400,
        cache_read_tokens: 1_000,
        cache_write_tokens: 100,
        total_tokens: 3_400,
      },
      active_cost_usd: 0.12,
    });
    expect(json.config).toEqual({
      workflow_path: s.sources.workflowPath,
      tracker: {
        kind: 'file',
        active_states: ['Todo', 'In Progress'],
        terminal_states: ['Done'],
        in_progress_state: 'In Progress',
        handoff_state: 'Review',
        blocked_state: null,
      },
      agent: {
        kind: 'mock',
        max_concurrent_agents: 3,
        max_concurrent_agents_by_state: { todo: 2 },
        max_turns: 5,
        max_sessions: expect.any(Number),
        max_tokens: expect.any(Number),
        max_cost_usd: 2.5,
        turn_timeout_ms: expect.any(Number),
        stall_timeout_ms: expect.any(Number),
      },
      polling_interval_ms: expect.any(Number),
      workspace_root: expect.any(String),
      db_path: expect.any(String),
      server: { host: '127.0.0.1', port: 7699 },
    });
  });

  it('never carries a secret of the config: tracker token, agent command, hook scripts, kind options', async () => {
    const s = await started();
    // The config the sources hand out really holds them (or the test proves nothing).
    const config = JSON.stringify(s.sources.config());
    for (const secret of Object.values(SECRETS)) expect(config).toContain(secret);
    const { body } = await getJson(`${s.url}/api/v1/state`);
    for (const secret of Object.values(SECRETS)) expect(body).not.toContain(secret);
    expect(body).not.toContain('mock-agent');
    expect(body).not.toContain('api_key');
  });

  it('sums tokens by model from the orchestrator observations since the server started', async () => {
    const s = await started();
    const delta = (input: number, output: number) => ({
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalTokens: input + output,
    });
    s.emit({ type: 'tokens', model: 'model-a', delta: delta(100, 10) });
    s.emit({ type: 'tokens', model: 'model-a', delta: delta(50, 5) });
    s.emit({ type: 'tokens', model: 'unknown', delta: delta(7, 1) });
    s.emit({ type: 'tick', result: 'success', durationMs: 3, candidates: 0 });
    const { json } = await getJson(`${s.url}/api/v1/state`);
    expect(json.tokens_by_model_since_start).toEqual({
      'model-a': {
        input_tokens: 150,
        output_tokens: 15,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        total_tokens: 165,
      },
      unknown: {
        input_tokens: 7,
        output_tokens: 1,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        total_tokens: 8,
      },
    });
  });

  it('prices a session still in its first turn at the token rates, and says null when it cannot', async () => {
    const s = await started((h) => {
      h.snapshot.running.push(
        runningEntry({ costMicroUsd: null, provenance: null, turn: 1, usage: { ...runningEntry().usage } }),
      );
    });
    const priced = await getJson(`${s.url}/api/v1/state`);
    const totals = priced.json.totals as Record<string, unknown>;
    // 120 000 µ$ settled + 3 400 tokens × 10 µ$ priced.
    expect(totals.active_cost_usd).toBeCloseTo(0.154, 9);
    expect((priced.json.running as Record<string, unknown>[])[1]?.cost_usd).toBeNull();
    s.sources.priceTokens = () => null;
    const unknown = await getJson(`${s.url}/api/v1/state`);
    expect((unknown.json.totals as Record<string, unknown>).active_cost_usd).toBeNull();
  });

  it('answers 503 snapshot_unavailable when the orchestrator cannot give its state', async () => {
    const s = await started();
    s.sources.snapshot = () => {
      throw new Error('owner gone');
    };
    const res = await getJson(`${s.url}/api/v1/state`);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      error: { code: 'snapshot_unavailable', message: 'the orchestrator state is unavailable' },
    });
  });

  it('answers 500 internal_error without echoing the exception, and logs the detail', async () => {
    const s = await started();
    s.sources.adapters = () => {
      throw new Error('adapter probe exploded at /secret/path');
    };
    const res = await getJson(`${s.url}/api/v1/state`);
    expect(res.status).toBe(500);
    expect(res.json).toEqual({
      error: { code: 'internal_error', message: 'internal error; see the service log' },
    });
    expect(res.body).not.toContain('/secret/path');
    expect(s.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'http request failed',
        fields: expect.objectContaining({ error: 'adapter probe exploded at /secret/path' }),
      }),
    );
  });

  it('answers 503 store_unavailable when the database is closed', async () => {
    const s = await started();
    s.store.close();
    const res = await getJson(`${s.url}/api/v1/state`);
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      error: { code: 'store_unavailable', message: 'the database is unavailable' },
    });
  });
});

describe('GET /api/v1/issues/:identifier', () => {
  it('shows a running issue with its current run and its recorded runs and turns', async () => {
    const s = await started();
    const { status, json } = await getJson(`${s.url}/api/v1/issues/ENG-2`);
    expect(status).toBe(200);
    expect(json).toMatchObject({
      issue_identifier: 'ENG-2',
      issue_id: 'issue-2',
      status: 'running',
      running: { run_id: s.runs.eng2Open, turn: 2, cost_usd: 0.12 },
      retry: null,
    });
    const runs = json.runs as Record<string, unknown>[];
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ id: s.runs.eng2Open, ended_at: null, exit_kind: null });
    expect(runs[0]?.turn_records).toHaveLength(1);
  });

  it('counts attempts one way: a running session shows the attempt of its run row, a queued retry the one after the last run', async () => {
    const s = await started();
    const live = (await getJson(`${s.url}/api/v1/issues/ENG-2`)).json as {
      running: { attempt: unknown };
      runs: { attempt: number }[];
    };
    expect(live.running.attempt).toBe(live.runs[0]?.attempt);
    expect(live.running.attempt).toBe(1);
    const queued = (await getJson(`${s.url}/api/v1/issues/ENG-3`)).json as {
      retry: { attempt: number };
      runs: { attempt: number }[];
    };
    expect(queued.retry.attempt).toBe((queued.runs[0]?.attempt ?? 0) + 1);
  });

  it('shows a retrying issue with its due time and last error', async () => {
    const s = await started();
    const { json } = await getJson(`${s.url}/api/v1/issues/ENG-3`);
    expect(json).toMatchObject({
      issue_id: 'issue-3',
      status: 'retrying',
      running: null,
      retry: { attempt: 2, due_in_seconds: 43, reason: 'stall', last_error: 'stalled' },
    });
    expect((json.runs as unknown[]).length).toBe(1);
  });

  it('shows an idle issue from the database alone: past runs newest first, each with its turns', async () => {
    const s = await started();
    const { status, json } = await getJson(`${s.url}/api/v1/issues/ENG-1`);
    expect(status).toBe(200);
    expect(json).toMatchObject({
      issue_identifier: 'ENG-1',
      issue_id: 'issue-1',
      status: 'idle',
      running: null,
      retry: null,
    });
    const runs = json.runs as Record<string, unknown>[];
    expect(runs.map((r) => r.id)).toEqual([s.runs.eng1Second, s.runs.eng1First]);
    const failed = runs[1] as Record<string, unknown>;
    expect(Object.keys(failed).sort()).toEqual(
      [
        'agent_kind',
        'attempt',
        'cost_usd',
        'ended_at',
        'error',
        'error_kind',
        'exit_kind',
        'host',
        'id',
        'issue_id',
        'issue_identifier',
        'provenance',
        'reaction',
        'self_review',
        'session_id',
        'started_at',
        'tokens',
        'tokens_by_model',
        'tool_calls',
        'turn_records',
        'turns',
        'unaccounted_turns',
        'workspace',
      ].sort(),
    );
    expect(failed.tool_calls).toEqual([
      { tool: 'tracker_comment', outcome: 'ok', calls: 2 },
      { tool: 'tracker_transition', outcome: 'tool_state_not_configured', calls: 1 },
    ]);
    expect((runs[0] as Record<string, unknown>).tool_calls).toEqual([]);
    expect(failed).toMatchObject({
      attempt: 1,
      exit_kind: 'failed',
      error_kind: 'port_exit',
      error: 'agent exited 3 (***)',
      turns: 2,
      cost_usd: null,
      provenance: 'unmeasured',
      unaccounted_turns: 1,
    });
    const turns = failed.turn_records as Record<string, unknown>[];
    expect(turns.map((t) => t.turn)).toEqual([1, 2]);
    expect(turns[1]).toEqual({
      run_id: s.runs.eng1First,
      turn: 2,
      session_id: 'sess-a',
      started_at: '2025-03-01T11:01:00.000Z',
      ended_at: '2025-03-01T11:01:00.000Z',
      exit_reason: 'turn_failed',
      error_kind: 'port_exit',
      error: 'agent exited 3 (***)',
      tokens: {
        input_tokens: 1_000,
        output_tokens: 200,
        cache_read_tokens: 300,
        cache_write_tokens: 50,
        total_tokens: 1_200,
      },
      tokens_by_model: {
        'model-a': {
          input_tokens: 1_000,
          output_tokens: 200,
          cache_read_tokens: 300,
          cache_write_tokens: 50,
          total_tokens: 1_200,
        },
      },
      usage_measured: true,
      spend_unaccounted: true,
      spend_coverable: false,
      covers_session: false,
      provenance: 'unmeasured',
      reported_amounts: [],
      final_message: '',
    });
    expect(turns[0]?.reported_amounts).toEqual([{ unit: 'USD', micros: 12_345 }]);
  });

  it('decodes the identifier from the path', async () => {
    const s = await started((h) => {
      h.snapshot.running = [
        runningEntry({ issue: { ...runningEntry().issue, id: 'gh-9', identifier: 'acme/web#9' } }),
      ];
    });
    const { status, json } = await getJson(`${s.url}/api/v1/issues/${encodeURIComponent('acme/web#9')}`);
    expect(status).toBe(200);
    expect(json).toMatchObject({ issue_identifier: 'acme/web#9', issue_id: 'gh-9', status: 'running' });
  });

  it('answers 404 issue_not_found for an issue it has never seen', async () => {
    const s = await started();
    const res = await getJson(`${s.url}/api/v1/issues/NOPE-1`);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: {
        code: 'issue_not_found',
        message: 'issue "NOPE-1" is not running, not queued for a retry and has no recorded run',
      },
    });
  });

  it('answers 400 invalid_parameter for broken percent-encoding', async () => {
    const s = await started();
    const res = await getJson(`${s.url}/api/v1/issues/%E0%A4%A`);
    expect(res.status).toBe(400);
    expect((res.json.error as Record<string, unknown>).code).toBe('invalid_parameter');
  });
});

describe('GET /api/v1/runs', () => {
  it('lists the latest runs newest first, 25 by default', async () => {
    const s = await started((h) => {
      for (let i = 0; i < 30; i += 1) {
        h.store.startRun({
          issueId: `bulk-${i}`,
          identifier: `BULK-${i}`,
          attempt: 1,
          host: null,
          agentKind: 'mock',
          workspace: `/tmp/ws/BULK-${i}`,
          startedAt: '2025-03-01T11:30:00.000Z',
        });
      }
    });
    const { status, json } = await getJson(`${s.url}/api/v1/runs`);
    expect(status).toBe(200);
    const runs = json.runs as Record<string, unknown>[];
    expect(runs).toHaveLength(25);
    const ids = runs.map((r) => r.id as number);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(runs[0]).toMatchObject({ issue_identifier: 'BULK-29', host: null, ended_at: null });
    const all = await getJson(`${s.url}/api/v1/runs?limit=500`);
    expect(all.json.runs as unknown[]).toHaveLength(34);
  });

  it('honours limit and shows each run in the run shape', async () => {
    const s = await started();
    const { json } = await getJson(`${s.url}/api/v1/runs?limit=2`);
    const runs = json.runs as Record<string, unknown>[];
    expect(runs.map((r) => r.id)).toEqual([s.runs.eng2Open, s.runs.eng3]);
    expect(runs[1]).toEqual({
      id: s.runs.eng3,
      issue_id: 'issue-3',
      issue_identifier: 'ENG-3',
      attempt: 1,
      host: 'local',
      agent_kind: 'mock',
      session_id: 'sess-1',
      workspace: '/tmp/ws/ENG-3',
      started_at: '2025-03-01T11:20:00.000Z',
      ended_at: '2025-03-01T11:21:00.000Z',
      exit_kind: 'failed',
      error_kind: 'response_timeout',
      error: 'stalled',
      turns: 0,
      tokens: {
        input_tokens: 1_000,
        output_tokens: 200,
        cache_read_tokens: 300,
        cache_write_tokens: 50,
        total_tokens: 1_200,
      },
      tokens_by_model: {
        'model-a': {
          input_tokens: 1_000,
          output_tokens: 200,
          cache_read_tokens: 300,
          cache_write_tokens: 50,
          total_tokens: 1_200,
        },
      },
      cost_usd: 0.012345,
      provenance: 'reported',
      unaccounted_turns: 0,
      reaction: null,
      self_review: null,
      tool_calls: [],
    });
    expect(Object.keys((runs[1] as { tokens: object }).tokens).sort()).toEqual(TOKENS_KEYS);
  });

  it.each(['0', '501', '-1', '1.5', 'abc', '', '1e2', '25&limit=3'])(
    'answers 400 invalid_parameter for limit=%s',
    async (limit) => {
      const s = await started();
      const res = await getJson(`${s.url}/api/v1/runs?limit=${limit}`);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        error: { code: 'invalid_parameter', message: 'limit must be one whole number from 1 to 500' },
      });
    },
  );

  it('masks secret values in what the store recorded', async () => {
    const s = await started();
    const { body } = await getJson(`${s.url}/api/v1/runs`);
    expect(body).toContain('agent exited 3 (***)');
    expect(body).not.toContain(MASKED);
  });

  it('answers 503 store_unavailable when the database is closed', async () => {
    const s = await started();
    s.store.close();
    const res = await getJson(`${s.url}/api/v1/runs`);
    expect(res.status).toBe(503);
    expect((res.json.error as Record<string, unknown>).code).toBe('store_unavailable');
  });
});

describe('POST /api/v1/refresh', () => {
  it('answers 202 and says when a second request was coalesced into the pending tick', async () => {
    const s = await started();
    const first = await getJson(`${s.url}/api/v1/refresh`, { method: 'POST' });
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ queued: true, coalesced: false, requested_at: new Date(T0).toISOString() });
    const second = await getJson(`${s.url}/api/v1/refresh`, { method: 'POST' });
    expect(second.status).toBe(202);
    expect(second.json).toMatchObject({ queued: true, coalesced: true });
    expect(s.refreshCalls).toBe(2);
  });

  it('answers 409 draining while the service shuts down', async () => {
    const s = await started((h) => {
      h.snapshot.draining = true;
    });
    const res = await getJson(`${s.url}/api/v1/refresh`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({
      error: { code: 'draining', message: 'the service is shutting down; no new tick will run' },
    });
  });

  it('refuses a cross-origin request (a web page cannot make the service tick)', async () => {
    const s = await started();
    const res = await getJson(`${s.url}/api/v1/refresh`, {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect((res.json.error as Record<string, unknown>).code).toBe('origin_not_allowed');
    expect(s.refreshCalls).toBe(0);
    const same = await getJson(`${s.url}/api/v1/refresh`, { method: 'POST', headers: { origin: s.url } });
    expect(same.status).toBe(202);
  });

  it('ignores a request body', async () => {
    const s = await started();
    const res = await request(`${s.url}/api/v1/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"anything":true}',
    });
    expect(res.status).toBe(202);
  });
});

describe('GET /metrics', () => {
  it('serves the exposition with its content type, masked', async () => {
    const s = await started();
    const res = await request(`${s.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toBe('# HELP orchestrator_up 1\norchestrator_up{v="***"} 1\n');
  });

  it('answers 500 internal_error when the registry fails', async () => {
    const s = await started();
    s.sources.metrics = async () => {
      throw new Error('collector failed');
    };
    const res = await getJson(`${s.url}/metrics`);
    expect(res.status).toBe(500);
    expect((res.json.error as Record<string, unknown>).code).toBe('internal_error');
  });
});

describe('GET / (dashboard)', () => {
  it('serves the page with a fresh nonce per response that the CSP names', async () => {
    const s = await started();
    const nonces: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const res = await request(`${s.url}/`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const nonce = /<script nonce="([^"]+)">/.exec(res.body)?.[1];
      expect(nonce).toBeDefined();
      expect(res.headers['content-security-policy']).toBe(
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; ` +
          "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      nonces.push(nonce ?? '');
    }
    expect(nonces[0]).not.toBe(nonces[1]);
    expect(nonces[0]?.length).toBeGreaterThanOrEqual(16);
  });

  it('serves the page even when the orchestrator cannot give a snapshot', async () => {
    const s = await started();
    s.sources.snapshot = () => {
      throw new Error('owner gone');
    };
    expect((await request(`${s.url}/`)).status).toBe(200);
  });

  it('answers /favicon.ico with 204 and no body', async () => {
    const s = await started();
    const res = await request(`${s.url}/favicon.ico`);
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
  });
});

describe('errors and methods', () => {
  it('answers an unknown path with 404 not_found in the envelope', async () => {
    const s = await started();
    for (const path of ['/nope', '/api/v1', '/api/v1/issues/', '/api/v1/issues/A/B', '/api/v1/state/']) {
      const res = await getJson(`${s.url}${path}`);
      expect(res.status, path).toBe(404);
      expect((res.json.error as Record<string, unknown>).code, path).toBe('not_found');
    }
  });

  it.each([
    ['POST', '/api/v1/state', 'GET, HEAD'],
    ['DELETE', '/api/v1/issues/ENG-1', 'GET, HEAD'],
    ['PUT', '/api/v1/runs', 'GET, HEAD'],
    ['POST', '/livez', 'GET, HEAD'],
    ['POST', '/readyz', 'GET, HEAD'],
    ['POST', '/metrics', 'GET, HEAD'],
    ['POST', '/api/v1/events', 'GET, HEAD'],
    ['POST', '/', 'GET, HEAD'],
    ['GET', '/api/v1/refresh', 'POST'],
    ['OPTIONS', '/api/v1/refresh', 'POST'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const s = await started();
    const res = await getJson(`${s.url}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.json).toEqual({
      error: { code: 'method_not_allowed', message: `${method} is not allowed here; allowed: ${allow}` },
    });
    expect(s.refreshCalls).toBe(0);
  });

  it('answers HEAD with the GET status and headers and no body', async () => {
    const s = await started();
    const get = await request(`${s.url}/api/v1/issues/ENG-1`);
    const head = await request(`${s.url}/api/v1/issues/ENG-1`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expectJsonHeaders(head.headers);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
    const missing = await request(`${s.url}/api/v1/issues/NOPE`, { method: 'HEAD' });
    expect(missing.status).toBe(404);
  });

  it('refuses a request for a foreign host name on a loopback server (DNS rebinding)', async () => {
    const s = await started();
    const res = await getJson(`${s.url}/api/v1/state`, {
      headers: { host: `rebind.example:${s.server.port}` },
    });
    expect(res.status).toBe(403);
    expect((res.json.error as Record<string, unknown>).code).toBe('host_not_allowed');
    for (const host of [
      `localhost:${s.server.port}`,
      `127.0.0.1:${s.server.port}`,
      `[::1]:${s.server.port}`,
    ]) {
      expect((await request(`${s.url}/livez`, { headers: { host } })).status, host).toBe(200);
    }
  });

  it('puts the same JSON headers on every JSON answer, success or error', async () => {
    const s = await started();
    for (const [method, path] of [
      ['GET', '/livez'],
      ['GET', '/readyz'],
      ['GET', '/api/v1/state'],
      ['GET', '/api/v1/runs'],
      ['GET', '/api/v1/issues/ENG-1'],
      ['GET', '/api/v1/issues/NOPE'],
      ['GET', '/api/v1/runs?limit=0'],
      ['POST', '/api/v1/refresh'],
      ['GET', '/missing'],
    ] as const) {
      const res = await request(`${s.url}${path}`, { method });
      expectJsonHeaders(res.headers);
      expect(() => JSON.parse(res.body), `${method} ${path}`).not.toThrow();
    }
  });
});
