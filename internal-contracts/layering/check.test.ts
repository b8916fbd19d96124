import { describe, expect, it } from 'vitest';
import { checkLayering, mayImport, type SourceFile, type ViolationRule } from './check.js';

/** Violations of a one-file tree, as `rule@line` for compact assertions. */
function check(filePath: string, text: string): string[] {
  return checkLayering([{ path: filePath, text }]).map((v) => `${v.rule}@${v.line}`);
}

function rules(files: SourceFile[]): ViolationRule[] {
  return checkLayering(files).map((v) => v.rule);
}

describe('layer rule', () => {
  it('a domain file importing the workflow layer is flagged', () => {
    expect(check('src/domain/x.ts', "import type { Workflow } from '../workflow/load.js';\n")).toEqual([
      'domain-import@1',
    ]);
  });

  it('a domain file importing a package or a node builtin is flagged', () => {
    expect(check('src/domain/x.ts', "import { z } from 'zod';\nimport fs from 'node:fs';\n")).toEqual([
      'domain-import@1',
      'domain-import@2',
    ]);
  });

  it('a domain file importing another domain file is allowed', () => {
    expect(check('src/domain/x.ts', "import type { Issue } from './issue.js';\n")).toEqual([]);
  });

  it('a tracker file importing the agent layer is flagged (integration peers are independent)', () => {
    expect(check('src/tracker/file/x.ts', "import { agentKind } from '../../agent/registry.js';\n")).toEqual([
      'layer@1',
    ]);
  });

  it('an upward import is flagged however it is written: re-export, dynamic import, import type', () => {
    const text = [
      "export { tick } from '../orchestrator/tick.js';",
      "const m = await import('../orchestrator/tick.js');",
      "type T = typeof import('../orchestrator/tick.js');",
      "import x = require('../orchestrator/tick.js');",
      "import type { Y } from '../server/api.js';",
    ].join('\n');
    expect(check('src/agent/x.ts', text)).toEqual(['layer@1', 'layer@2', 'layer@3', 'layer@4', 'layer@5']);
  });

  it('a dynamic import of a computed path is flagged, since the check cannot see where it goes', () => {
    expect(check('src/cli/x.ts', 'const m = await import(name);\n')).toEqual(['opaque-import@1']);
  });

  it('downward imports, workflow and prompt importing each other, and cli importing anything are allowed', () => {
    expect(
      rules([
        { path: 'src/agent/core/x.ts', text: "import { loadWorkflow } from '../../workflow/load.js';" },
        { path: 'src/workflow/x.ts', text: "import { compilePrompt } from '../prompt/template.js';" },
        { path: 'src/prompt/x.ts', text: "import type { Workflow } from '../workflow/load.js';" },
        { path: 'src/orchestrator/x.ts', text: "import { x } from '../tracker/registry.js';" },
        { path: 'src/cli/x.ts', text: "import '../server/api.js';\nimport '../orchestrator/tick.js';" },
        { path: 'src/agent/x.ts', text: "import { execa } from 'execa';" },
      ]),
    ).toEqual([]);
  });

  it('same-level folders may import each other only when declared peers', () => {
    expect(mayImport('workflow', 'prompt')).toBe(true);
    expect(mayImport('agent', 'workspace')).toBe(false);
    expect(mayImport('server', 'observability')).toBe(true);
    expect(mayImport('tracker', 'agent')).toBe(false);
    expect(mayImport('orchestrator', 'cli')).toBe(false);
  });

  it('src importing a test harness or a test file is flagged', () => {
    expect(
      rules([
        {
          path: 'src/agent/x.ts',
          text: "import { h } from '../../internal-contracts/tracker/conformance.js';",
        },
        { path: 'src/cli/x.ts', text: "import { h } from '../../test/tracker/file/helpers.js';" },
      ]),
    ).toEqual(['outside-src', 'outside-src']);
  });

  it('a file outside every layer folder is flagged, so a new folder cannot escape the rules', () => {
    expect(check('src/misc/x.ts', '')).toEqual(['unknown-layer@1']);
    expect(check('src/index.ts', '')).toEqual(['unknown-layer@1']);
  });

  it('an import that only appears in a string or a comment is not taken for an import', () => {
    const text = "// import '../orchestrator/tick.js';\nconst hint = \"import '../server/api.js'\";\n";
    expect(check('src/workflow/x.ts', text)).toEqual([]);
  });

  it('files outside src are not checked', () => {
    expect(
      check('test/agent/x.test.ts', "import '../../src/orchestrator/tick.js';\nconst k = 'claude';"),
    ).toEqual([]);
  });
});

describe('product-name rule', () => {
  it("'claude' in an orchestrator string is flagged", () => {
    expect(check('src/orchestrator/x.ts', "if (kind === 'claude') run();\n")).toEqual(['product-name@1']);
  });

  it("'claude' inside its own adapter folder is allowed", () => {
    expect(check('src/agent/claude-code/x.ts', "export const KIND = 'claude';\n")).toEqual([]);
  });

  it('a product name only in comments is allowed, so prose can explain', () => {
    const text =
      '// mirrors the github adapter\n/* like codex, and Jira */\n/** Claude too */\nexport const a = 1;\n';
    expect(check('src/orchestrator/x.ts', text)).toEqual([]);
  });

  it('a product name is flagged case-insensitively in identifiers, templates and regexes', () => {
    const text = [
      'const githubToken = 1;',
      'const s = `${x}Copilot${y}`;',
      'const r = /jira-\\d+/;',
      'const o = { Gemini: 1 };',
    ].join('\n');
    expect(check('src/orchestrator/x.ts', text)).toEqual([
      'product-name@1',
      'product-name@2',
      'product-name@3',
      'product-name@4',
    ]);
  });

  it('one adapter naming another product is flagged', () => {
    expect(check('src/agent/codex/x.ts', "import { c } from '../claude-code/config.js';\n")).toEqual([
      'product-name@1',
    ]);
  });

  it('an import path naming an adapter folder is flagged outside the registry line files', () => {
    expect(check('src/cli/x.ts', "import '../agent/claude-code/index.js';\n")).toEqual(['product-name@1']);
  });

  it('the registry line files may import their own adapter folders, but not name products otherwise', () => {
    expect(
      check('src/agent/kinds.ts', "import './claude-code/index.js';\nimport './codex/index.js';\n"),
    ).toEqual([]);
    expect(
      check('src/tracker/kinds.ts', "import './github/index.js';\nimport './linear/index.js';\n"),
    ).toEqual([]);
    expect(check('src/agent/kinds.ts', "export const DEFAULT = 'claude';\n")).toEqual(['product-name@1']);
    expect(check('src/agent/kinds.ts', "import '../tracker/github/index.js';\n")).toEqual([
      'layer@1',
      'product-name@1',
    ]);
  });

  it('a file whose own path names a product outside its folder is flagged', () => {
    expect(check('src/orchestrator/github-sync.ts', 'export {};\n')).toEqual(['product-name@1']);
  });
});
