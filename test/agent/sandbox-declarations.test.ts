/**
 * Every registered kind states how its runtime confines the shell commands the model asks
 * for, and the statement is the one its docs paragraph makes: a kind added without a row
 * here fails, so its sandbox is decided on purpose rather than left to a default.
 */
import { describe, expect, it } from 'vitest';
import '../../src/agent/kinds.js';
import { agentKinds } from '../../src/agent/registry.js';

const DECLARED: Readonly<Record<string, 'probe' | 'none' | 'unprobeable'>> = {
  'claude-code': 'unprobeable',
  codex: 'probe',
  'copilot-cli': 'none',
  echo: 'none',
  gemini: 'unprobeable',
  mock: 'none',
  opencode: 'none',
};

describe('sandbox declarations of the registered kinds', () => {
  it('each runnable kind declares the sandbox its docs describe', () => {
    const declared = Object.fromEntries(
      agentKinds()
        .filter((k) => k.runtime !== undefined)
        .map((k) => [k.name, k.runtime?.sandbox.kind]),
    );
    expect(declared).toEqual(DECLARED);
  });

  it('a kind that cannot be probed says what to check, and one without a sandbox says why', () => {
    for (const kind of agentKinds()) {
      const sandbox = kind.runtime?.sandbox;
      if (sandbox?.kind === 'unprobeable') expect(sandbox.whatToCheck.length, kind.name).toBeGreaterThan(40);
      if (sandbox?.kind === 'none') expect(sandbox.reason.length, kind.name).toBeGreaterThan(10);
    }
  });
});
