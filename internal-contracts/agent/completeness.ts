/**
 * Suite coverage of the registered agent kinds: every kind that declares a
 * runtime must prove it with the three shared adapter suites, each called from a
 * test file in its own test folder (`test/agent/<kind>/`); a kind without a
 * runtime is validate-only and must still check its block. Calls are found with
 * the TypeScript compiler, so a suite named in a comment or a string does not count.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { AgentKind } from '../../src/agent/registry.js';
import type { SourceFile } from '../layering/check.js';
import { readSourceTree } from '../layering/read-tree.js';

/** The suites a runnable kind must call, with what each proves. */
export const REQUIRED_SUITES = {
  assertUsageReporting: 'usage reporting (the figures agree with the declared usage sources)',
  assertDispositionContract: 'disposition contract (turns end as the shared rule decides)',
  assertCredentialVerification: 'credential verification (verified, unverified, proof reuse)',
} as const;
/** The suite a kind with a tool channel (`mcpDialect` other than `none`) must call besides. */
export const TOOL_CHANNEL_SUITES = {
  assertToolDelivery: 'tool delivery (its servers, no secret on the argv or in a file)',
} as const;
export type SuiteName = keyof typeof REQUIRED_SUITES | keyof typeof TOOL_CHANNEL_SUITES;

/** The test folder of a kind, repository-relative. */
export function kindTestFolder(kind: string): string {
  return `test/agent/${kind}`;
}

/** The `*.test.ts` files under the kind's test folder; [] when the folder does not exist. */
export function readKindTests(root: string, kind: string): SourceFile[] {
  const folder = kindTestFolder(kind);
  if (!existsSync(path.join(root, folder))) return [];
  return readSourceTree(root, folder).filter((f) => f.path.endsWith('.test.ts'));
}

/** The required suites a file calls (`assertX(…)` or `ns.assertX(…)`). */
export function suitesCalled(file: SourceFile): Set<SuiteName> {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const called = new Set<SuiteName>();
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : null;
      if (name !== null && (name in REQUIRED_SUITES || name in TOOL_CHANNEL_SUITES))
        called.add(name as SuiteName);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return called;
}

/** What the check needs to know of a kind. */
export type KindEntry = Pick<AgentKind, 'name' | 'runtime' | 'validateConfig'>;

/** Every coverage problem, one message per kind and missing suite; [] when complete. */
export function checkCompleteness(
  kinds: readonly KindEntry[],
  testsOf: (kind: string) => SourceFile[],
): string[] {
  const problems: string[] = [];
  for (const kind of kinds) {
    if (typeof kind.validateConfig !== 'function') {
      problems.push(`agent kind ${kind.name}: no validateConfig, so its block cannot be checked offline`);
    }
    if (kind.runtime === undefined) continue;
    const files = testsOf(kind.name);
    const called = new Set<SuiteName>();
    for (const file of files) for (const suite of suitesCalled(file)) called.add(suite);
    const required = {
      ...REQUIRED_SUITES,
      ...((kind.runtime.mcpDialect ?? 'none') === 'none' ? {} : TOOL_CHANNEL_SUITES),
    };
    for (const [suite, what] of Object.entries(required) as [SuiteName, string][]) {
      if (!called.has(suite)) {
        problems.push(
          `agent kind ${kind.name} declares a runtime but no test file under ${kindTestFolder(kind.name)}/ calls ` +
            `${suite}: the ${what} suite is missing`,
        );
      }
    }
  }
  return problems;
}
