/**
 * The sandbox check with stand-in probes: a declaration without a probe is reported, never
 * run; a usable sandbox is proved once per setup and reused (the agent environment is part
 * of the setup); a failure is never kept, so a fixed setup is asked again; callers of one
 * setup share the probe running; a probe that throws is "unchecked", not a pass or a crash;
 * the start-up check probes in a scratch folder inside the workspace root and removes it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkSandbox,
  checkSandboxAtStart,
  type SandboxCheckParams,
} from '../../../src/agent/core/sandbox-check.js';
import { MemoryProofStore, PROOF_TTL_MS } from '../../../src/agent/core/verify-credential.js';
import type { SandboxProbeInput, SandboxProbeResult } from '../../../src/agent/registry.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'sandbox-check-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const UNUSABLE: SandboxProbeResult = {
  status: 'unusable',
  summary: 'mode m cannot write',
  cause: 'helper refused\nexec failed',
  fixes: ['set k.home_root', 'k.sandbox: off'],
};

function probing(results: SandboxProbeResult[]) {
  const seen: SandboxProbeInput[] = [];
  const probe = async (input: SandboxProbeInput) => {
    seen.push(input);
    return results[Math.min(seen.length - 1, results.length - 1)] as SandboxProbeResult;
  };
  return { seen, runtime: { sandbox: { kind: 'probe' as const, probe } } };
}

function params(
  runtime: SandboxCheckParams['runtime'],
  o: Partial<SandboxCheckParams> = {},
): SandboxCheckParams {
  return {
    kind: 'k',
    runtime,
    command: null,
    options: { sandbox: 'm' },
    env: { HOME: '/h' },
    workspacePath: root,
    store: new MemoryProofStore(),
    ...o,
  };
}

describe('checkSandbox', () => {
  it('reports a kind without a sandbox, or one that cannot be asked, with its declaration and runs nothing', async () => {
    expect(await checkSandbox(params({ sandbox: { kind: 'none', reason: 'no tools' } }))).toEqual({
      ok: true,
      status: 'none',
      detail: 'no tools',
      cached: false,
    });
    expect(
      await checkSandbox(params({ sandbox: { kind: 'unprobeable', whatToCheck: 'check the settings' } })),
    ).toMatchObject({ ok: true, status: 'unprobeable', detail: 'check the settings' });
  });

  it('an unusable sandbox is a failure naming the cause in the runtime words and every fix', async () => {
    const { runtime } = probing([UNUSABLE]);
    const found = await checkSandbox(params(runtime));
    expect(found.ok).toBe(false);
    if (!found.ok) {
      expect(found.message).toContain('the k sandbox cannot run the agent');
      expect(found.message).toContain('mode m cannot write');
      expect(found.message).toContain('  helper refused\n  exec failed');
      expect(found.message).toContain('Fix: set k.home_root; or k.sandbox: off');
    }
  });

  it('a usable sandbox is proved once per setup and reused until the proof is 15 minutes old', async () => {
    const { runtime, seen } = probing([{ status: 'usable', detail: 'wrote' }]);
    const store = new MemoryProofStore();
    let nowMs = 1_000_000;
    const p = params(runtime, { store, nowMs: () => nowMs });
    expect(await checkSandbox(p)).toMatchObject({ ok: true, status: 'usable', cached: false });
    expect(await checkSandbox(p)).toMatchObject({ ok: true, status: 'usable', cached: true });
    expect(seen).toHaveLength(1);
    nowMs += PROOF_TTL_MS;
    expect(await checkSandbox(p)).toMatchObject({ cached: false });
    expect(seen).toHaveLength(2);
  });

  it('a different agent environment or block is another setup and is probed again', async () => {
    const { runtime, seen } = probing([{ status: 'usable', detail: 'wrote' }]);
    const store = new MemoryProofStore();
    await checkSandbox(params(runtime, { store }));
    await checkSandbox(params(runtime, { store, env: { HOME: '/tmp/h' } }));
    await checkSandbox(params(runtime, { store, options: { sandbox: 'other' } }));
    expect(seen).toHaveLength(3);
  });

  it('a failure is never kept: the next check asks again and passes once the setup is fixed', async () => {
    const { runtime, seen } = probing([UNUSABLE, { status: 'usable', detail: 'wrote' }]);
    const store = new MemoryProofStore();
    expect((await checkSandbox(params(runtime, { store }))).ok).toBe(false);
    expect((await checkSandbox(params(runtime, { store }))).ok).toBe(true);
    expect(seen).toHaveLength(2);
  });

  it('callers of one setup wait for the probe already running instead of starting their own', async () => {
    let release: () => void = () => undefined;
    let runs = 0;
    const runtime = {
      sandbox: {
        kind: 'probe' as const,
        probe: async (): Promise<SandboxProbeResult> => {
          runs += 1;
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          return { status: 'usable', detail: 'wrote' };
        },
      },
    };
    const store = new MemoryProofStore();
    const first = checkSandbox(params(runtime, { store }));
    const second = checkSandbox(params(runtime, { store }));
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await first).toMatchObject({ ok: true, cached: false });
    expect(await second).toMatchObject({ ok: true, cached: true });
    expect(runs).toBe(1);
  });

  it('a probe that throws is unchecked with its message, not a pass and not a crash', async () => {
    const runtime = {
      sandbox: {
        kind: 'probe' as const,
        probe: async (): Promise<SandboxProbeResult> => {
          throw new Error('spawn EACCES');
        },
      },
    };
    const store = new MemoryProofStore();
    expect(await checkSandbox(params(runtime, { store }))).toMatchObject({
      ok: true,
      status: 'unchecked',
      detail: 'spawn EACCES',
    });
    expect(store.get('anything')).toBeNull();
  });
});

describe('checkSandboxAtStart', () => {
  it('probes in a scratch folder made inside the workspace root, and removes it afterwards', async () => {
    const { runtime, seen } = probing([{ status: 'usable', detail: 'wrote' }]);
    const workspaceRoot = path.join(root, 'not-yet-made', 'workspaces');
    const found = await checkSandboxAtStart({
      kind: 'k',
      runtime,
      command: null,
      options: {},
      env: {},
      workspaceRoot,
      store: new MemoryProofStore(),
    });
    expect(found).toMatchObject({ ok: true, status: 'usable' });
    const probedIn = seen[0]?.workspacePath ?? '';
    expect(path.dirname(probedIn)).toBe(workspaceRoot);
    expect(existsSync(probedIn)).toBe(false);
    expect(readdirSync(workspaceRoot)).toEqual([]);
  });
});
