/**
 * Walks every registered agent kind: a kind with a runtime declaration is proven
 * by the three shared adapter suites from its own test folder; a kind without one
 * is validate-only and checks its block.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import '../../src/agent/kinds.js';
import { type AgentRuntimeDeclaration, agentKinds } from '../../src/agent/registry.js';
import type { SourceFile } from '../layering/check.js';
import { checkCompleteness, type KindEntry, readKindTests, suitesCalled } from './completeness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const kinds = agentKinds();
const runnable = kinds.filter((k) => k.runtime !== undefined);
const validateOnly = kinds.filter((k) => k.runtime === undefined);

describe('every registered agent kind', () => {
  it('the walk sees the registry (an empty one would pass vacuously)', () => {
    expect(runnable.map((k) => k.name)).toEqual(
      expect.arrayContaining(['claude-code', 'codex', 'echo', 'mock']),
    );
  });

  for (const kind of runnable) {
    it(`${kind.name} (runtime): its test folder calls the usage, disposition and credential suites`, () => {
      expect(checkCompleteness([kind], (name) => readKindTests(ROOT, name))).toEqual([]);
    });
  }

  for (const kind of validateOnly) {
    it(`${kind.name} (validate-only): it has a validateConfig`, () => {
      expect(checkCompleteness([kind], () => [])).toEqual([]);
      expect(kind.validateConfig({})).toBeInstanceOf(Array);
    });
  }
});

describe('checkCompleteness', () => {
  const base = runnable[0]?.runtime;
  if (base === undefined) throw new Error('no runnable kind is registered');
  const runtime: AgentRuntimeDeclaration = { ...base, mcpDialect: 'none', mcpDialectNoneReason: 'no tools' };
  const kind = (name: string, withRuntime: boolean, over: Partial<typeof runtime> = {}): KindEntry => ({
    name,
    validateConfig: () => [],
    ...(withRuntime ? { runtime: { ...runtime, ...over } } : {}),
  });
  const file = (text: string): SourceFile => ({ path: 'test/agent/acme/acme.test.ts', text });

  it('names the kind and each missing suite when a runnable kind has no tests', () => {
    const problems = checkCompleteness([kind('acme', true)], () => []);
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(
      /agent kind acme declares a runtime .* test\/agent\/acme\/ calls assertUsageReporting/,
    );
    expect(problems.join('\n')).toMatch(/calls assertDispositionContract/);
    expect(problems.join('\n')).toMatch(/calls assertCredentialVerification/);
  });

  it('counts only real calls: a suite named in a comment, a string or an import does not count', () => {
    const text = [
      "import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';",
      '// assertDispositionContract(harness)',
      "const s = 'assertCredentialVerification(h)';",
      'assertUsageReporting("acme", run);',
    ].join('\n');
    expect([...suitesCalled(file(text))]).toEqual(['assertUsageReporting']);
    expect(checkCompleteness([kind('acme', true)], () => [file(text)])).toHaveLength(2);
  });

  it('accepts the three suites spread over several files, awaited or namespaced', () => {
    const files = [
      file('await assertDispositionContract(h);'),
      file('assertUsageReporting(k, r); await contracts.assertCredentialVerification(h);'),
    ];
    expect(checkCompleteness([kind('acme', true)], () => files)).toEqual([]);
  });

  it('asks a kind with a tool channel for the tool-delivery suite too', () => {
    const three = file(
      'assertUsageReporting(k, r); assertDispositionContract(h); assertCredentialVerification(h);',
    );
    const withTools = kind('acme', true, { mcpDialect: 'mcp-json' });
    expect(checkCompleteness([withTools], () => [three])).toEqual([
      expect.stringMatching(/test\/agent\/acme\/ calls assertToolDelivery: the tool delivery/),
    ]);
    expect(checkCompleteness([withTools], () => [three, file('assertToolDelivery(d, s);')])).toEqual([]);
    expect(checkCompleteness([kind('acme', true)], () => [three])).toEqual([]);
  });

  it('needs no suites from a validate-only kind, but a validateConfig', () => {
    expect(checkCompleteness([kind('acme', false)], () => [])).toEqual([]);
    const broken = { name: 'acme', validateConfig: undefined } as unknown as KindEntry;
    expect(checkCompleteness([broken], () => [])).toEqual([
      'agent kind acme: no validateConfig, so its block cannot be checked offline',
    ]);
  });
});
