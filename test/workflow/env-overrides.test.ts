import { describe, expect, it } from 'vitest';
import { applyEnvOverrides } from '../../src/workflow/env-overrides.js';

describe('ORCHESTRATOR_* overrides', () => {
  it('replace YAML values with coerced ones', () => {
    const raw: Record<string, unknown> = { agent: { max_turns: 5 }, tracker: { kind: 'file' } };
    const result = applyEnvOverrides(raw, {
      ORCHESTRATOR_AGENT_MAX_TURNS: '7',
      ORCHESTRATOR_TRACKER_ACTIVE_STATES: ' Todo, ,In Progress ',
      ORCHESTRATOR_TRACKER_COMMENTS_ON_DISPATCH: 'TRUE',
      ORCHESTRATOR_AGENT_MAX_COST_USD: '2.5',
    });
    expect(result.issues).toEqual([]);
    expect(raw).toEqual({
      agent: { max_turns: 7, max_cost_usd: 2.5 },
      tracker: { kind: 'file', active_states: ['Todo', 'In Progress'], comments: { on_dispatch: true } },
    });
    expect(result.overridden.has('agent.max_turns')).toBe(true);
  });

  it('the worker (SSH) keys can be overridden too', () => {
    const raw: Record<string, unknown> = { worker: { ssh_hosts: ['old'] } };
    const result = applyEnvOverrides(raw, {
      ORCHESTRATOR_WORKER_SSH_HOSTS: 'ci@b1:2222, b2',
      ORCHESTRATOR_WORKER_MAX_CONCURRENT_AGENTS_PER_HOST: '2',
      ORCHESTRATOR_WORKER_SSH_STRICT_HOST_KEY_CHECKING: 'yes',
      ORCHESTRATOR_WORKER_SSH_IDENTITY_FILE: '~/.ssh/id_ed25519',
      ORCHESTRATOR_WORKER_SSH_KNOWN_HOSTS_FILE: '/etc/orch/known_hosts',
      ORCHESTRATOR_WORKER_SSH_USER: 'ci',
      ORCHESTRATOR_WORKER_SSH_CONNECT_TIMEOUT_MS: '5000',
      ORCHESTRATOR_WORKER_SSH_FORWARD_ENV: 'LANG,ANTHROPIC_BASE_URL',
    });
    expect(result.issues).toEqual([]);
    expect(raw).toEqual({
      worker: {
        ssh_hosts: ['ci@b1:2222', 'b2'],
        max_concurrent_agents_per_host: 2,
        ssh_strict_host_key_checking: 'yes',
        ssh_identity_file: '~/.ssh/id_ed25519',
        ssh_known_hosts_file: '/etc/orch/known_hosts',
        ssh_user: 'ci',
        ssh_connect_timeout_ms: 5000,
        ssh_forward_env: ['LANG', 'ANTHROPIC_BASE_URL'],
      },
    });
  });

  it('an empty variable is no override', () => {
    const raw: Record<string, unknown> = { agent: { max_turns: 5 } };
    applyEnvOverrides(raw, { ORCHESTRATOR_AGENT_MAX_TURNS: '  ' });
    expect(raw).toEqual({ agent: { max_turns: 5 } });
  });

  it.each([
    ['ORCHESTRATOR_AGENT_MAX_TURNS', 'abc'],
    ['ORCHESTRATOR_AGENT_MAX_TURNS', '1.5'],
    ['ORCHESTRATOR_TRACKER_COMMENTS_ON_FAILURE', 'yes'],
    ['ORCHESTRATOR_AGENT_MAX_COST_USD', 'lots'],
  ])('a value that cannot be coerced names the variable (%s=%s)', (variable, value) => {
    const raw: Record<string, unknown> = {};
    const result = applyEnvOverrides(raw, { [variable]: value });
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]?.code).toBe('env_override.invalid');
    expect(result.issues[0]?.message).toContain(variable);
    expect(raw).toEqual({});
  });
});
