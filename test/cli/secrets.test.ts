import { describe, expect, it } from 'vitest';
import { agentEnvironment, remoteAgentEnvironment } from '../../src/cli/secrets.js';
import { OWNER_ENV } from '../../src/orchestrator/orphans.js';

const ENV = {
  PATH: '/usr/bin',
  HOME: '/root',
  MOCK_API_KEY: 'mock-secret-value-1',
  OTHER_API_KEY: 'other-secret-value-2',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
  ORCHESTRATOR_DB_PATH: '/x.db',
  EMPTY: '',
};

describe('agent environments', () => {
  it('locally: the orchestrator environment minus ORCHESTRATOR_* and other secrets, plus the owner tag', () => {
    const env = agentEnvironment(
      ENV,
      ['mock-secret-value-1', 'other-secret-value-2'],
      ['MOCK_API_KEY'],
      'tag-1',
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/root',
      MOCK_API_KEY: 'mock-secret-value-1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      EMPTY: '',
      [OWNER_ENV]: 'tag-1',
    });
  });

  it('on an SSH host: only the kind credentials and forwarded variables that are set, plus the owner tag', () => {
    const env = remoteAgentEnvironment(
      ENV,
      ['MOCK_API_KEY'],
      ['ANTHROPIC_BASE_URL', 'EMPTY', 'UNSET'],
      'tag-1',
    );
    expect(env).toEqual({
      MOCK_API_KEY: 'mock-secret-value-1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      [OWNER_ENV]: 'tag-1',
    });
  });
});
