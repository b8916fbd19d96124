import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_KEY_LENGTH, workspaceKey } from '../../src/workspace/keys.js';
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
    ['ABC-123', 'ABC-123'],
    ['owner/repo#9', 'owner_repo_9'],
    ['../', '.._'],
    ['../../etc', '.._.._etc'],
    ['/etc/passwd', '_etc_passwd'],
    ['a\0b', 'a_b'],
    ['\0', '_'],
    ['ÄÖ-1', '__-1'],
    ['🚀', '_'],
    ['fix 🚀 now', 'fix___now'],
    ['..\\..\\windows', '.._.._windows'],
    ['...', '...'],
    ['~', '_'],
    ['$HOME', '_HOME'],
    [' ', '_'],
  ])('identifier %j cannot carry a separator, NUL or non-ASCII into the name (-> %j)', (identifier, key) => {
    expect(keyOf(identifier)).toBe(key);
  });

  it.each([[''], ['.'], ['..']])(
    'identifier %j is refused instead of naming the root or its parent',
    (identifier) => {
      const result = workspaceKey(identifier);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.kind).toBe('invalid_key');
    },
  );

  it('a key of exactly the cap is kept whole, not needlessly hashed', () => {
    const identifier = 'a'.repeat(MAX_KEY_LENGTH);
    expect(keyOf(identifier)).toBe(identifier);
  });

  it('a very long identifier is shortened under the filesystem name limit', () => {
    const key = keyOf('x'.repeat(100_000));
    expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(key).toMatch(/^x{100}-[0-9a-f]{12}$/);
  });

  it('two long identifiers sharing a long prefix do not collapse into one workspace', () => {
    const prefix = 'p'.repeat(200);
    expect(keyOf(`${prefix}-one`)).not.toBe(keyOf(`${prefix}-two`));
  });

  it('long identifiers that sanitise alike still get distinct keys (hash of the raw identifier)', () => {
    const prefix = 'q'.repeat(200);
    expect(keyOf(`${prefix}/x`)).not.toBe(keyOf(`${prefix}#x`));
  });

  it('the same identifier always maps to the same workspace', () => {
    const identifier = `${'z'.repeat(300)}🚀`;
    expect(keyOf(identifier)).toBe(keyOf(identifier));
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

describe('workspaceKey properties', () => {
  it('no identifier yields a key with a separator, NUL, a dot-only name or an over-long name', () => {
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
        expect(result.key).toMatch(/^[A-Za-z0-9._-]+$/);
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
