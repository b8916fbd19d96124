import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { legacyWorkspaceKey, MAX_KEY_LENGTH, workspaceKey } from '../../src/workspace/keys.js';
import { WorkspaceManager } from '../../src/workspace/manager.js';
import { noHooks, removeTempDirs, tempDir } from './support.js';

afterAll(removeTempDirs);

const keyOf = (identifier: string): string => {
  const result = workspaceKey(identifier);
  if (!result.ok) throw new Error(`unexpected refusal of ${JSON.stringify(identifier)}`);
  return result.key;
};

describe('workspaceKey', () => {
  it.each([
    ['ABC-123'],
    ['owner.repo-9'],
    ['x..y'],
    ['a'.repeat(MAX_KEY_LENGTH)],
    ['1e3'],
    ['x-1234567890abcdef'],
  ])('a safe identifier %j is its own key, unchanged', (identifier) => {
    expect(keyOf(identifier)).toBe(identifier);
  });

  it.each([
    ['owner/repo#9', 'owner_repo_9'],
    ['../', '_._'],
    ['../../etc', '_._.._etc'],
    ['/etc/passwd', '_etc_passwd'],
    ['a\0b', 'a_b'],
    ['\0', '_'],
    ['ÄÖ-1', '__-1'],
    ['🚀', '_'],
    ['fix 🚀 now', 'fix___now'],
    ['..\\..\\windows', '_._.._windows'],
    ['...', '_..'],
    ['.', '_'],
    ['..', '_.'],
    ['.hidden', '_hidden'],
    ['~', '_'],
    ['$HOME', '_HOME'],
    [' ', '_'],
  ])(
    'identifier %j keeps no separator, NUL, leading dot or non-ASCII (-> %j plus a hash)',
    (identifier, prefix) => {
      const key = keyOf(identifier);
      expect(key.startsWith(`${prefix}--`)).toBe(true);
      expect(key).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*--[0-9a-f]{16}$/);
    },
  );

  it('identifiers that sanitise alike (A/B, A_B, A:B, A B) get four different workspaces', () => {
    const keys = ['A/B', 'A_B', 'A:B', 'A B'].map(keyOf);
    expect(keys[1]).toBe('A_B');
    expect(new Set(keys).size).toBe(4);
  });

  it('an identifier shaped like a hashed key is hashed itself, so it cannot take another issue’s workspace', () => {
    const hashed = keyOf('A/B');
    expect(keyOf(hashed)).not.toBe(hashed);
    expect(keyOf(hashed)).toMatch(/--[0-9a-f]{16}$/);
  });

  it('only the empty identifier is refused', () => {
    const result = workspaceKey('');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.kind).toBe('invalid_key');
  });

  it('a very long identifier is shortened under the filesystem name limit', () => {
    const key = keyOf('x'.repeat(100_000));
    expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(key).toMatch(/^x{100}--[0-9a-f]{16}$/);
  });

  it('two long identifiers sharing a long prefix do not collapse into one workspace', () => {
    const prefix = 'p'.repeat(200);
    expect(keyOf(`${prefix}-one`)).not.toBe(keyOf(`${prefix}-two`));
  });

  it('the same identifier always maps to the same workspace', () => {
    const identifier = `${'z'.repeat(300)}🚀`;
    expect(keyOf(identifier)).toBe(keyOf(identifier));
  });

  it('the old name is known for identifiers whose key changed, and only for them', () => {
    expect(legacyWorkspaceKey('owner/repo#9')).toBe('owner_repo_9');
    expect(legacyWorkspaceKey('ABC-1')).toBeNull();
    expect(legacyWorkspaceKey('..')).toBeNull();
    expect(legacyWorkspaceKey('x'.repeat(200))).toMatch(/^x{100}-[0-9a-f]{12}$/);
  });
});

/** Identifiers built from the pieces path attacks are made of, plus arbitrary unicode. */
const hostileIdentifier = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc
    .array(fc.constantFrom('..', '.', '/', '\\', '\0', 'a', 'Z9', '-', '_', 'é', '🚀', '', ' ', '~'), {
      maxLength: 80,
    })
    .map((parts) => parts.join('')),
  fc.constantFrom('', '.', '..', '/', '/etc/passwd', '../../etc', 'x'.repeat(5_000)),
);

/** Short identifiers over an alphabet where the old rule (unsafe characters to `_`) collided often. */
const collidingIdentifier = fc
  .array(fc.constantFrom('A', '/', '_', ':', ' ', '.', '-', 'é'), { minLength: 1, maxLength: 6 })
  .map((parts) => parts.join(''));

describe('workspaceKey properties', () => {
  it('no identifier yields a key with a separator, NUL, a leading dot or an over-long name', () => {
    fc.assert(
      fc.property(hostileIdentifier, (identifier) => {
        const result = workspaceKey(identifier);
        if (!result.ok) {
          expect(result.error.kind).toBe('invalid_key');
          return;
        }
        expect(result.key).not.toContain('/');
        expect(result.key).not.toContain('\0');
        expect(result.key).not.toBe('.');
        expect(result.key).not.toBe('..');
        expect(result.key).not.toBe('');
        expect(result.key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
        expect(result.key).toMatch(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/);
      }),
      { numRuns: 2_000 },
    );
  });

  it('distinct identifiers never share a key', () => {
    fc.assert(
      fc.property(collidingIdentifier, collidingIdentifier, (a, b) => {
        fc.pre(a !== b);
        const ka = workspaceKey(a);
        const kb = workspaceKey(b);
        if (ka.ok && kb.ok) expect(ka.key).not.toBe(kb.key);
      }),
      { numRuns: 2_000 },
    );
  });

  it('pathFor never yields a path outside the root, the root itself, or a nested path', async () => {
    const root = path.join(await tempDir(), 'root');
    const manager = new WorkspaceManager({ root, hooks: noHooks(), baseEnv: {} });
    fc.assert(
      fc.property(hostileIdentifier, (identifier) => {
        const result = manager.pathFor(identifier);
        if (!result.ok) {
          expect(result.error.kind).toBe('invalid_key');
          return;
        }
        expect(path.dirname(result.path)).toBe(root);
        expect(path.basename(result.path)).toBe(result.key);
        expect(path.relative(root, result.path)).toBe(result.key);
      }),
      { numRuns: 2_000 },
    );
  });
});
