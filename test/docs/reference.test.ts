/**
 * The reference pages in docs/ are read against the code they describe: every WORKFLOW.md key
 * of the schema, every pass-through block key, every ORCHESTRATOR_* override, every diagnostic
 * code, every metric, every HTTP route and API error code, every error kind and every mock
 * directive must have its entry, and an entry whose key, code or route no longer exists fails
 * too. So adding one
 * without its line in the docs fails here, and a page cannot go on describing what is gone.
 *
 * Diagnostic codes are not declared in one place: they are string literals where each rule
 * lives. They are found by scanning the source text of src/ for literals shaped like a code
 * (dotted lower-case segments, a `${…}` part read as a placeholder), comments skipped. The
 * trap is a scanner that quietly finds nothing and passes: it is checked on known codes first,
 * and the few dotted literals that are not codes are listed below with the reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import '../../src/agent/kinds.js';
import { agentKindNames } from '../../src/agent/registry.js';
import { MONEY_RULE } from '../../src/agent/usage/money.js';
import { RETRY_TABLE } from '../../src/domain/errors.js';
import { createMetrics } from '../../src/observability/metrics.js';
import '../../src/tracker/kinds.js';
import { trackerKindNames } from '../../src/tracker/registry.js';
import { ENV_OVERRIDES } from '../../src/workflow/env-overrides.js';
import { frontMatterSchema } from '../../src/workflow/schema.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SRC = path.join(ROOT, 'src');

/** Beginnings of dotted literals in src/ that are not diagnostic codes, and what they are. */
const NOT_CODE_PREFIXES: ReadonlyMap<string, string> = new Map([
  ['thread.', "event types of Codex's exec --json stream (thread.started)"],
  ['turn.', "event types of Codex's exec --json stream (turn.completed, turn.failed)"],
  ['item.', "event types of Codex's exec --json stream (item.started, item.completed)"],
  ['commander.', 'error codes of the commander library (commander.version, commander.help)'],
  ['assistant.', "event types of Copilot CLI's JSON stream (assistant.message, assistant.message_delta)"],
  ['session.', "event types of Copilot CLI's stream and journal (session.error, session.usage_record)"],
  ['tool.', "event types of Copilot CLI's JSON stream (tool.execution_start, tool.execution_complete)"],
  ['model.', "event types of Copilot CLI's JSON stream (model.call_start, model.call_failure)"],
  ['user.', 'git configuration keys (user.name, user.email) of the identity a commit is made with'],
  ['mcp_servers.', 'Codex config keys set with -c (mcp_servers.<name>.enabled) to switch a tool server off'],
]);
/** A last segment that makes a dotted literal a file name, not a code. */
const FILE_SUFFIXES = new Set([
  'json',
  'jsonl',
  'toml',
  'js',
  'cjs',
  'mjs',
  'ts',
  'md',
  'tmp',
  'cache',
  'db',
  'yaml',
  'yml',
]);
/** A code: dotted segments of lower-case words, `<>` standing for a part filled in at run time. */
const CODE_SHAPE = /^(?:[a-z][a-z0-9_-]*|<>)(?:\.(?:[a-z][a-z0-9_-]*|<>))+$/;

// ---------------------------------------------------------------- reading the docs

function page(name: string): string {
  return readFileSync(path.join(ROOT, 'docs', name), 'utf8');
}

/** A placeholder such as `<agent kind>` or `<key>` reads as `<>`, as `${…}` does in the source. */
function normalise(text: string): string {
  return text.trim().replace(/<[^<>]*>/g, '<>');
}

/** Every inline code span of `markdown`, normalised. */
function spans(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => normalise(m[1] as string)));
}

/** The text under `heading` (a `## ` line) up to the next heading of the same level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`no "${heading}" section`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/^## /m);
  return end === -1 ? rest : rest.slice(0, end);
}

/** The code spans in the first cell of every table row (header and rule rows skipped). */
function firstColumn(markdown: string): Set<string> {
  const out = new Set<string>();
  const lines = markdown.split('\n');
  lines.forEach((line, i) => {
    if (!line.startsWith('|') || /^\|[-| :]+\|$/.test(line)) return;
    if (/^\|[-| :]+\|$/.test(lines[i + 1] ?? '')) return;
    const cell = line.split(/(?<!\\)\|/)[1] ?? '';
    for (const span of spans(cell)) out.add(span);
  });
  return out;
}

/** The expected entries the documented set lacks, sorted. */
function missing(expected: Iterable<string>, documented: ReadonlySet<string>): string[] {
  return [...new Set(expected)].filter((e) => !documented.has(e)).sort();
}

// ---------------------------------------------------------------- reading the code

interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
}

function defOf(schema: z.ZodType): ZodDef {
  return (schema as unknown as { _zod: { def: ZodDef } })._zod.def;
}

/**
 * The dotted path of every leaf key below `schema`. A map of named entries reads as
 * `<>` (`token_rates.<>.input_per_mtok`); a map of plain values is one key.
 */
function leafKeys(schema: z.ZodType, prefix: readonly string[]): string[] {
  const def = defOf(schema);
  const leaf = [prefix.join('.')];
  switch (def.type) {
    case 'object': {
      const entries = Object.entries(def.shape ?? {});
      return entries.length === 0
        ? leaf
        : entries.flatMap(([key, child]) => leafKeys(child, [...prefix, key]));
    }
    case 'record': {
      const inner = leafKeys(def.valueType as z.ZodType, [...prefix, '<>']);
      return inner.length === 1 && inner[0] === [...prefix, '<>'].join('.') ? leaf : inner;
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
      return leafKeys(def.innerType as z.ZodType, prefix);
    case 'pipe': {
      const fromIn = def.in === undefined ? leaf : leafKeys(def.in, prefix);
      if (fromIn.length > 1 || fromIn[0] !== leaf[0]) return fromIn;
      return def.out === undefined ? leaf : leafKeys(def.out, prefix);
    }
    default:
      return leaf;
  }
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * The string literals of TypeScript source, comments skipped: quoted ones as written, template
 * literals with each `${…}` replaced by `<>`. Regular-expression literals are not told apart
 * from division; a code never sits in one.
 */
function stringLiterals(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const quoted = (quote: string): string => {
    let value = '';
    i += 1;
    while (i < text.length && text[i] !== quote && text[i] !== '\n') {
      if (text[i] === '\\') {
        value += text[i + 1] ?? '';
        i += 2;
        continue;
      }
      value += text[i];
      i += 1;
    }
    i += 1;
    return value;
  };
  const template = (): string => {
    let value = '';
    i += 1;
    while (i < text.length && text[i] !== '`') {
      if (text[i] === '\\') {
        value += text[i + 1] ?? '';
        i += 2;
      } else if (text.startsWith('${', i)) {
        i += 2;
        for (let depth = 1; i < text.length && depth > 0; ) {
          const c = text[i] as string;
          if (c === '`') {
            template();
            continue;
          }
          if (c === "'" || c === '"') {
            quoted(c);
            continue;
          }
          if (c === '{') depth += 1;
          if (c === '}') depth -= 1;
          i += 1;
        }
        value += '<>';
      } else {
        value += text[i];
        i += 1;
      }
    }
    i += 1;
    return value;
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
    } else if (c === "'" || c === '"') {
      out.push(quoted(c));
    } else if (c === '`') {
      out.push(template());
    } else {
      i += 1;
    }
  }
  return out;
}

/** Literals of `text` shaped like a diagnostic code, less file names and the listed exceptions. */
function codeLiterals(text: string, configKeys: ReadonlySet<string>): string[] {
  return stringLiterals(text).filter((literal) => {
    if (!CODE_SHAPE.test(literal) || configKeys.has(literal)) return false;
    if ([...NOT_CODE_PREFIXES.keys()].some((prefix) => literal.startsWith(prefix))) return false;
    const segments = literal.split('.');
    if (segments.every((s) => s === '<>')) return false;
    return !FILE_SUFFIXES.has(segments[segments.length - 1] as string);
  });
}

/** The keys of each kind's `<kind>:` block, read from the kind's config.ts. */
function blockKeys(folder: 'agent' | 'tracker', kind: string): string[] {
  const text = readFileSync(path.join(SRC, folder, kind, 'config.ts'), 'utf8');
  // Agent kinds: defineBlock('<kind>', z.object({ key: …, … }), …) as biome lays it out.
  const defined = new RegExp(
    `defineBlock\\(\\s*'${kind}',\\s*z\\.object\\(\\{\\n([\\s\\S]*?)\\n  \\}\\)`,
  ).exec(text);
  if (defined !== null)
    return [...(defined[1] as string).matchAll(/^ {4}([a-z][a-z0-9_]*):/gm)].map((m) => m[1] as string);
  // Tracker kinds: `…KEYS` constants, lists (or Sets) of names, else maps from names (all of them).
  const listed = [...text.matchAll(/const \w*KEYS\b[^=]*= (?:new Set\()?\[([^\]]*)\]/g)].flatMap((list) =>
    [...(list[1] as string).matchAll(/'([a-z][a-z0-9_]*)'/g)].map((m) => m[1] as string),
  );
  if (listed.length > 0) return listed;
  return [...text.matchAll(/const \w*KEYS\b[^=]*= \{\n([\s\S]*?)\n\};/g)].flatMap((map) =>
    [...(map[1] as string).matchAll(/^ {2}([a-z][a-z0-9_]*):/gm)].map((m) => m[1] as string),
  );
}

const CONFIG_KEYS = leafKeys(frontMatterSchema, []);
const BLOCK_KEYS = [
  ...trackerKindNames().flatMap((kind) => blockKeys('tracker', kind).map((key) => `${kind}.${key}`)),
  ...agentKindNames().flatMap((kind) => blockKeys('agent', kind).map((key) => `${kind}.${key}`)),
];
const CODES = new Set(
  sourceFiles(SRC).flatMap((file) =>
    codeLiterals(readFileSync(file, 'utf8'), new Set([...CONFIG_KEYS, ...BLOCK_KEYS])),
  ),
);

/** True when `code` is `pattern` with each `<>` filled in. */
function fills(pattern: string, code: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split('<>')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'))
      .join('[a-z0-9_.-]+')}$`,
  );
  return re.test(code);
}

// ---------------------------------------------------------------- the checks

describe('the readers of code and docs', () => {
  it('literals come without comments, a template part reads as <>', () => {
    const text = [
      "// 'in.a.comment'",
      "/* 'in.a.block' */ const a = 'agent.kind.missing';",
      "const b = `${key}.invalid`; const c = `tracker.${k.join('.')}.empty`;",
      'const d = "x.y"; const u = \'https://example.com/a.b\';',
    ].join('\n');
    expect(stringLiterals(text)).toEqual([
      'agent.kind.missing',
      '<>.invalid',
      'tracker.<>.empty',
      'x.y',
      'https://example.com/a.b',
    ]);
  });

  it('the scan finds the codes known to exist, so it cannot pass by finding nothing', () => {
    for (const code of ['agent.command.missing', 'config.unknown_key', 'tracker.active_states.missing']) {
      expect(CODES).toContain(code);
    }
    for (const pattern of ['<>.invalid', '<>.out_of_range', 'tracker.<>.empty', 'github.<>.invalid']) {
      expect(CODES).toContain(pattern);
    }
    expect(CODES.size).toBeGreaterThan(60);
    expect(CONFIG_KEYS).toContain('agent.max_turns');
    expect(CONFIG_KEYS).toContain('token_rates.<>.input_per_mtok');
    expect(CONFIG_KEYS.length).toBeGreaterThan(60);
  });

  it('every registered kind has its block keys read (a new block layout must be taught to blockKeys)', () => {
    for (const kind of trackerKindNames()) expect(blockKeys('tracker', kind), kind).not.toEqual([]);
    for (const kind of agentKindNames()) expect(blockKeys('agent', kind), kind).not.toEqual([]);
  });

  it('an entry removed from a page is reported, by name', () => {
    const keys = page('configuration.md');
    const withoutKey = keys.replace(/^\| `agent\.max_turns` .*\n/m, '');
    expect(missing(CONFIG_KEYS, spans(keys))).not.toContain('agent.max_turns');
    expect(missing(CONFIG_KEYS, spans(withoutKey))).toContain('agent.max_turns');
    const codes = page('diagnostics.md');
    const withoutCode = codes.replace(/^\| `agent\.command\.missing` .*\n/m, '');
    expect(missing(CODES, firstColumn(codes))).not.toContain('agent.command.missing');
    expect(missing(CODES, firstColumn(withoutCode))).toContain('agent.command.missing');
  });
});

describe('docs/configuration.md', () => {
  const text = page('configuration.md');

  it('has a row for every key of the WORKFLOW.md schema, and none for a key it does not have', () => {
    expect(missing(CONFIG_KEYS, spans(section(text, '## Keys and defaults')))).toEqual([]);
    const rows = firstColumn(section(text, '## Keys and defaults'));
    expect(missing(rows, new Set(CONFIG_KEYS))).toEqual([]);
  });

  it('has a row for every key of every pass-through block, and none for a key it does not have', () => {
    const rows = firstColumn(section(text, '## Pass-through blocks'));
    expect(missing(BLOCK_KEYS, rows)).toEqual([]);
    expect(missing(rows, new Set(BLOCK_KEYS))).toEqual([]);
  });

  it('names every ORCHESTRATOR_* override, and no variable that is not one', () => {
    const variables = ENV_OVERRIDES.map((o) => o.variable);
    const rows = firstColumn(section(text, '## Environment'));
    expect(missing(variables, rows)).toEqual([]);
    expect(missing(rows, new Set(variables))).toEqual([]);
  });
});

describe('docs/diagnostics.md', () => {
  const rows = firstColumn(page('diagnostics.md'));

  it('lists every diagnostic code found in src/', () => {
    expect(missing(CODES, rows)).toEqual([]);
  });

  it('lists no code that src/ no longer has', () => {
    const stale = [...rows].filter(
      (code) => !CODES.has(code) && ![...CODES].some((p) => p.includes('<>') && fills(p, code)),
    );
    expect(stale).toEqual([]);
  });
});

describe('docs/metrics.md', () => {
  const metrics = createMetrics({
    version: 'docs',
    snapshot: () => {
      throw new Error('no orchestrator in this test');
    },
  });
  /** The service's own metrics; prom-client's process and Node.js defaults are described as a group. */
  const names = metrics.registry
    .getMetricsAsArray()
    .map((m) => m.name)
    .filter((name) => !/^orchestrator_(process|nodejs)_/.test(name));

  it('has a row for every metric of the registry, and none for a metric it does not have', () => {
    const rows = firstColumn(page('metrics.md'));
    expect(names.length).toBeGreaterThan(20);
    expect(missing(names, rows)).toEqual([]);
    expect(missing(rows, new Set(names))).toEqual([]);
  });
});

describe('docs/http-api.md', () => {
  const text = page('http-api.md');
  const routesTs = readFileSync(path.join(SRC, 'server', 'routes.ts'), 'utf8');
  const respondTs = readFileSync(path.join(SRC, 'server', 'respond.ts'), 'utf8');

  it('has a row for every route of the server, and none for a route it does not have', () => {
    const fixed = [...routesTs.matchAll(/\['(\/[^']*)', \{ methods:/g)].map((m) => m[1] as string);
    // Routes with a parameter are matched by a regular expression: `([^/]+)` is the parameter.
    const patterns = [...routesTs.matchAll(/\/\^(\\\/[^$]*)\$\/\.exec\(url\.pathname\)/g)].map((m) =>
      (m[1] as string).replaceAll('\\/', '/').replaceAll('([^/]+)', ':param'),
    );
    expect(fixed.length).toBeGreaterThan(5);
    expect(patterns.length).toBeGreaterThan(0);
    const routes = [...fixed, ...patterns];
    const table = section(text, '## Routes');
    const documented = new Set(
      table
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .map((line) =>
          normalise((/^\| `[A-Z]+` \| `([^`?]+)/.exec(line)?.[1] ?? '').replace(/:[a-z_]+/g, ':param')),
        ),
    );
    expect(missing(routes, documented)).toEqual([]);
    expect(missing(documented, new Set(routes))).toEqual([]);
  });

  it('has a row for every API error code, and none for a code the server does not answer with', () => {
    const union = /export type ApiErrorCode =([^;]*);/.exec(respondTs)?.[1] ?? '';
    const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1] as string);
    expect(codes.length).toBeGreaterThan(5);
    const table = section(text, '## Errors');
    const documented = new Set(
      table
        .split('\n')
        .map((line) => /^\| \d{3} \| `([a-z_]+)`/.exec(line)?.[1])
        .filter((code): code is string => code !== undefined),
    );
    expect(missing(codes, documented)).toEqual([]);
    expect(missing(documented, new Set(codes))).toEqual([]);
  });
});

describe('docs/agents.md', () => {
  const text = page('agents.md');

  it('gives the retry decision of every error kind, and of no kind that does not exist', () => {
    const rows = firstColumn(section(text, '## Error kinds and retries'));
    const kinds = Object.keys(RETRY_TABLE);
    expect(missing(kinds, rows)).toEqual([]);
    expect(missing(rows, new Set(kinds))).toEqual([]);
  });

  it('has a row for every directive the mock runtime acts out, and none it does not', () => {
    const runtime = readFileSync(path.join(SRC, 'agent', 'mock', 'runtime.ts'), 'utf8');
    const directives = [...runtime.matchAll(/^ {6}case '([a-z]+)':/gm)].map((m) => `!${m[1]}`);
    expect(directives.length).toBeGreaterThan(10);
    const rows = [...firstColumn(section(text, '## Mock directives'))].map(
      (span) => span.split(' ')[0] as string,
    );
    expect(missing(directives, new Set(rows))).toEqual([]);
    expect(missing(rows, new Set(directives))).toEqual([]);
  });

  it('states the money rule the usage module applies', () => {
    expect(text.replace(/\s+/g, ' ')).toContain(MONEY_RULE);
  });
});
