/**
 * The layering and naming rules of the source tree, as pure functions over file
 * texts so they can be tested on small synthetic trees and run on the real one.
 * Files are parsed with the TypeScript compiler rather than matched with regular
 * expressions: a regex cannot tell an import in code from one quoted in a string
 * or a comment, and comments must stay free to explain things in prose.
 */
import path from 'node:path';
import ts from 'typescript';

/** A source file, its path relative to the repository root with `/` separators. */
export interface SourceFile {
  path: string;
  text: string;
}

export type ViolationRule =
  | 'domain-import'
  | 'layer'
  | 'outside-src'
  | 'opaque-import'
  | 'unknown-layer'
  | 'product-name';

export interface Violation {
  rule: ViolationRule;
  /** The offending file, repository-relative. */
  file: string;
  /** 1-based line of the offending import or name. */
  line: number;
  message: string;
}

/**
 * Each layer folder under `src/` with its level; a file may import from its own
 * folder and from folders of a strictly lower level, plus the peers listed below.
 */
export const LAYER_LEVELS: Readonly<Record<string, number>> = {
  domain: 0,
  workflow: 1,
  prompt: 1,
  tracker: 2,
  agent: 2,
  workspace: 2,
  ssh: 2,
  persistence: 2,
  tools: 2,
  orchestrator: 3,
  server: 4,
  observability: 4,
  cli: 5,
};

/** Same-level folders that may import each other (both directions). */
export const PEER_IMPORTS: readonly (readonly [string, string])[] = [
  ['workflow', 'prompt'],
  ['server', 'observability'],
];

/** Each product name and the one adapter folder where it may appear. */
export const PRODUCT_FOLDERS: Readonly<Record<string, string>> = {
  claude: 'src/agent/claude-code/',
  codex: 'src/agent/codex/',
  copilot: 'src/agent/copilot-cli/',
  opencode: 'src/agent/opencode/',
  gemini: 'src/agent/gemini/',
  github: 'src/tracker/github/',
  linear: 'src/tracker/linear/',
  jira: 'src/tracker/jira/',
  gitlab: 'src/tracker/gitlab/',
};

/** Registry line files: their imports may name the adapter folders they register. */
export const REGISTRY_FILES: readonly string[] = ['src/agent/kinds.ts', 'src/tracker/kinds.ts'];

/**
 * Places where a product name is not an adapter leaking into core code. Each
 * entry says why; keep the list short.
 */
export const NAME_EXCEPTIONS: readonly { file: string; name: string; why: string }[] = [
  {
    file: 'src/cli/diagnostics-format.ts',
    name: 'github',
    why: '`validate --format github` prints GitHub Actions workflow commands, a CI output format',
  },
  {
    file: 'src/agent/copilot-cli/command.ts',
    name: 'github',
    why: 'Copilot CLI reads its login from variables named after GitHub (COPILOT_GITHUB_TOKEN, GITHUB_TOKEN)',
  },
  {
    file: 'src/agent/opencode/command.ts',
    name: 'gemini',
    why: "OpenCode's Google provider reads its key from GEMINI_API_KEY, among others",
  },
  {
    file: 'src/agent/opencode/command.ts',
    name: 'claude',
    why: "OpenCode's switch that stops it reading ~/.claude instructions and skills is OPENCODE_DISABLE_CLAUDE_CODE",
  },
];

/** An import, re-export, dynamic import or import type found in a file. */
export interface ImportRef {
  /** The module specifier, or null when it is not a string literal (`import(name)`). */
  specifier: string | null;
  line: number;
  /** The literal node, so the name rule can tell a registry import from other strings. */
  node: ts.Node;
}

/** Checks every file under `src/` in `files`; other files are ignored. */
export function checkLayering(files: readonly SourceFile[]): Violation[] {
  const violations: Violation[] = [];
  for (const file of files) {
    const filePath = toPosix(file.path);
    if (!filePath.startsWith('src/')) continue;
    const source = parse(filePath, file.text);
    const imports = extractImports(source);
    const layer = layerOf(filePath);
    if (layer === null) {
      violations.push({
        rule: 'unknown-layer',
        file: filePath,
        line: 1,
        message: `${filePath} sits in no layer folder (known: ${Object.keys(LAYER_LEVELS).join(', ')})`,
      });
    }
    for (const ref of imports) {
      const found = checkImport(filePath, layer, ref);
      if (found) violations.push(found);
    }
    violations.push(...checkNames(filePath, source, imports));
  }
  return violations;
}

/** Formats a violation like a compiler message, for test output. */
export function formatViolation(v: Violation): string {
  return `${v.file}:${v.line} [${v.rule}] ${v.message}`;
}

/** The layer folder of a repository-relative `src/` path, or null for a file at the top of `src/`. */
export function layerOf(filePath: string): string | null {
  const parts = toPosix(filePath).split('/');
  if (parts[0] !== 'src' || parts.length < 3) return null;
  const folder = parts[1] as string;
  return folder in LAYER_LEVELS ? folder : null;
}

/** Every module reference of a parsed file: static imports and re-exports, `import()`, `import x = require()`, `import('…')` types. */
export function extractImports(source: ts.SourceFile): ImportRef[] {
  const refs: ImportRef[] = [];
  const add = (node: ts.Node, literal: ts.Node | undefined) => {
    const at = literal ?? node;
    const specifier = literal && ts.isStringLiteralLike(literal) ? literal.text : null;
    refs.push({ specifier, line: lineOf(source, at), node: at });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier) add(node, node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      add(node, ts.isLiteralTypeNode(arg) ? arg.literal : undefined);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return refs;
}

function checkImport(filePath: string, layer: string | null, ref: ImportRef): Violation | null {
  const at = { file: filePath, line: ref.line };
  if (ref.specifier === null) {
    return {
      rule: 'opaque-import',
      ...at,
      message: 'an import whose specifier is not a string literal cannot be checked',
    };
  }
  const relative = ref.specifier.startsWith('./') || ref.specifier.startsWith('../');
  if (!relative) {
    if (layer === 'domain') {
      return {
        rule: 'domain-import',
        ...at,
        message: `domain imports nothing outside src/domain, but imports '${ref.specifier}'`,
      };
    }
    return null;
  }
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(filePath), ref.specifier));
  if (!target.startsWith('src/')) {
    return {
      rule: 'outside-src',
      ...at,
      message: `src/ imports only src/ and packages, but '${ref.specifier}' resolves to ${target}`,
    };
  }
  const targetLayer = layerOf(target);
  if (layer === null) return null;
  if (targetLayer === null) {
    return {
      rule: 'unknown-layer',
      ...at,
      message: `'${ref.specifier}' resolves to ${target}, which sits in no layer folder`,
    };
  }
  if (layer === 'domain' && targetLayer !== 'domain') {
    return {
      rule: 'domain-import',
      ...at,
      message: `domain imports nothing outside src/domain, but imports ${target}`,
    };
  }
  if (!mayImport(layer, targetLayer)) {
    return {
      rule: 'layer',
      ...at,
      message: `${layer} (level ${LAYER_LEVELS[layer]}) may not import ${targetLayer} (level ${LAYER_LEVELS[targetLayer]}): ${target}`,
    };
  }
  return null;
}

/** True when a file in folder `from` may import from folder `to`. */
export function mayImport(from: string, to: string): boolean {
  if (from === to) return true;
  const fromLevel = LAYER_LEVELS[from];
  const toLevel = LAYER_LEVELS[to];
  if (fromLevel === undefined || toLevel === undefined) return false;
  if (toLevel < fromLevel) return true;
  return PEER_IMPORTS.some(([a, b]) => (a === from && b === to) || (a === to && b === from));
}

/** Product names in code (identifiers, strings, templates, regexes, import paths) and in the file's own path. */
function checkNames(filePath: string, source: ts.SourceFile, imports: readonly ImportRef[]): Violation[] {
  const violations: Violation[] = [];
  const seen = new Set<string>();
  const flag = (name: string, line: number, what: string) => {
    if (NAME_EXCEPTIONS.some((e) => e.file === filePath && e.name === name)) return;
    const key = `${name}:${line}`;
    if (seen.has(key)) return;
    seen.add(key);
    violations.push({
      rule: 'product-name',
      file: filePath,
      line,
      message: `product name "${name}" ${what} outside ${PRODUCT_FOLDERS[name]}`,
    });
  };

  for (const name of productNamesIn(filePath)) {
    if (!filePath.startsWith(PRODUCT_FOLDERS[name] as string)) flag(name, 1, 'in the file path');
  }

  const ownFolder = `${path.posix.dirname(filePath)}/`;
  const registryImports = new Map<ts.Node, string>();
  if (REGISTRY_FILES.includes(filePath)) {
    for (const ref of imports) {
      if (ref.specifier !== null && ts.isStringLiteralLike(ref.node)) {
        registryImports.set(
          ref.node,
          path.posix.normalize(path.posix.join(path.posix.dirname(filePath), ref.specifier)),
        );
      }
    }
  }

  const visit = (node: ts.Node): void => {
    const text = nameBearingText(node);
    if (text !== null) {
      const target = registryImports.get(node);
      for (const name of productNamesIn(text)) {
        const folder = PRODUCT_FOLDERS[name] as string;
        if (filePath.startsWith(folder)) continue;
        if (target !== undefined && `${target}/`.startsWith(folder) && folder.startsWith(ownFolder)) continue;
        flag(
          name,
          lineOf(source, node),
          ts.isIdentifier(node) || ts.isPrivateIdentifier(node) ? 'as an identifier' : 'in a literal',
        );
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return violations;
}

/** The text of a node that can carry a name in code; comments are trivia and never reach here. */
function nameBearingText(node: ts.Node): string | null {
  if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) return node.text;
  if (ts.isStringLiteralLike(node) || ts.isRegularExpressionLiteral(node)) return node.text;
  if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) return node.text;
  if (ts.isJsxText(node)) return node.text;
  return null;
}

/** The product names contained in `text`, case-insensitively. */
export function productNamesIn(text: string): string[] {
  const lower = text.toLowerCase();
  return Object.keys(PRODUCT_FOLDERS).filter((name) => lower.includes(name));
}

function parse(filePath: string, text: string): ts.SourceFile {
  const kind = filePath.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  return ts.createSourceFile(filePath, text, ts.ScriptTarget.Latest, true, kind);
}

function lineOf(source: ts.SourceFile, node: ts.Node): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}
