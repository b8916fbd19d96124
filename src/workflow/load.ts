/**
 * Loads WORKFLOW.md into a typed config and a compiled prompt, or a list of
 * diagnostics. It never throws on bad input: every problem becomes a coded
 * diagnostic with the line and column of the ORIGINAL file, so `validate` can
 * print it like a compiler and a failed reload can keep the last good config.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Document, LineCounter, parseDocument, type YAMLParseError, type YAMLWarning } from 'yaml';
import type { ConfigIssue, Diagnostic, Severity } from '../domain/diagnostic.js';
import { checkCompiled } from '../prompt/check.js';
import { firstProblem, renderText } from '../prompt/issue-text.js';
import { compilePrompt, type PromptTemplate } from '../prompt/template.js';
import { promptVariables, SAMPLE_ISSUE } from '../prompt/variables.js';
import { buildServiceConfig, type GitConfig, type ServiceConfig } from './config.js';
import { parseDotenv } from './dotenv.js';
import { duplicateKeys } from './duplicate-keys.js';
import { applyEnvOverrides } from './env-overrides.js';
import type { Env } from './env-vars.js';
import { normaliseText, type Origin, splitFrontMatter } from './front-matter.js';
import { applyKindDefaults } from './kind-defaults.js';
import type { KindCatalog } from './kinds.js';
import { countEntries, WORKFLOW_MAX_ENTRIES, WORKFLOW_MAX_SIZE_BYTES } from './limits.js';
import { type LocalFile, localFileIssue } from './local-files.js';
import { readMcpConfig } from './mcp-config.js';
import { createLocator, keyText, type Locator, rangeStart, toPosition } from './positions.js';
import { mapReferenceFormats } from './reference-formats.js';
import { type FrontMatter, frontMatterSchema, knownKeys } from './schema.js';
import { closest } from './suggest.js';
import { schemaIssue } from './zod-issues.js';

export interface Workflow {
  config: ServiceConfig;
  template: PromptTemplate;
  /** The prompt body as written (trimmed), and where it starts in the file. */
  promptSource: string;
  promptOrigin: Origin;
  /** Warnings; a loaded workflow has no errors. */
  diagnostics: Diagnostic[];
}

export type LoadResult = { ok: true; workflow: Workflow } | { ok: false; diagnostics: Diagnostic[] };

export interface LoadOptions {
  /** Process environment used for `$VAR` and ORCHESTRATOR_* overrides. */
  env: Env;
  /** Adapter kinds known to this build; without it kinds are not checked. */
  kinds?: KindCatalog;
  /** Explicit `.env` path (from `--env-file`); otherwise ORCHESTRATOR_ENV_FILE, otherwise none. */
  envFile?: string;
  /** Render the template against a sample issue (validate does; a reload need not). */
  checkRender?: boolean;
  /**
   * Check that the files the service reads on this machine exist (a file tracker's issues
   * file, worker.ssh_identity_file), reporting them at this severity; unchecked when absent.
   */
  localFiles?: Severity;
  /** File text, when already read (tests, fuzzing). */
  text?: string | Uint8Array;
}

/** Loads and validates a workflow file. Never throws. */
export function loadWorkflow(workflowPath: string, options: LoadOptions): LoadResult {
  const file = path.resolve(workflowPath);
  const diagnostics: Diagnostic[] = [];
  const fail = (): LoadResult => ({ ok: false, diagnostics: sortDiagnostics(diagnostics) });

  let raw: string;
  try {
    const source = options.text ?? readFileSync(file);
    const sizeBytes = typeof source === 'string' ? Buffer.byteLength(source) : source.byteLength;
    if (sizeBytes > WORKFLOW_MAX_SIZE_BYTES) {
      diagnostics.push(
        fileError(
          file,
          'workflow.too_large',
          `workflow file is ${sizeBytes} bytes; the limit is ${WORKFLOW_MAX_SIZE_BYTES} bytes (1 MiB)`,
        ),
      );
      return fail();
    }
    raw = typeof source === 'string' ? source : Buffer.from(source).toString('utf8');
  } catch (error) {
    diagnostics.push(
      (error as NodeJS.ErrnoException).code === 'EISDIR'
        ? fileError(file, 'workflow.not_a_file', directoryMessage(file))
        : fileError(file, 'workflow.not_found', `cannot read workflow file: ${describeError(error)}`),
    );
    return fail();
  }

  const env = loadEnv(options, diagnostics);
  const split = splitFrontMatter(normaliseText(raw));
  if (split.unclosed) {
    diagnostics.push({
      ...at(file, 1, 1),
      severity: 'error',
      code: 'workflow.front_matter.unclosed',
      message: 'front matter opened with "---" is never closed: add a "---" line after the YAML',
    });
    return fail();
  }

  const normalised = normaliseText(raw);
  if (split.yaml === null && /^\s*\n---[ \t]*\n/.test(normalised)) {
    const first = normalised.split('\n').findIndex((l) => l.trim() !== '');
    diagnostics.push({
      ...at(file, first + 1, 1),
      severity: 'error',
      code: 'workflow.front_matter.not_first_line',
      message: 'front matter must start on the first line: remove what stands before "---"',
    });
    return fail();
  }
  const lineCounter = new LineCounter();
  let doc: Document | null = null;
  let locator: Locator | null = null;
  let data: unknown = {};
  if (split.yaml !== null) {
    if (countEntries(split.yaml, WORKFLOW_MAX_ENTRIES) > WORKFLOW_MAX_ENTRIES) {
      diagnostics.push({
        ...at(file, split.yamlOrigin.line, 1),
        severity: 'error',
        code: 'workflow.too_large',
        message: `front matter holds more than ${WORKFLOW_MAX_ENTRIES} keys and list items, the limit`,
      });
      return fail();
    }
    // Duplicate keys are found by duplicateKeys(): the parser's own check is quadratic in a map's size.
    doc = parseDocument(split.yaml, { lineCounter, uniqueKeys: false, prettyErrors: false, strict: true });
    for (const e of doc.errors)
      diagnostics.push(yamlDiagnostic(file, lineCounter, split.yamlOrigin, e, 'error'));
    for (const w of doc.warnings)
      diagnostics.push(yamlDiagnostic(file, lineCounter, split.yamlOrigin, w, 'warning'));
    if (doc.errors.length > 0) return fail();
    const repeats = duplicateKeys(doc);
    for (const pair of repeats) {
      const pos = toPosition(lineCounter, split.yamlOrigin, rangeStart(pair.key) ?? 0);
      diagnostics.push({
        ...at(file, pos.line, pos.column),
        severity: 'error',
        code: 'workflow.yaml_duplicate_key',
        message: `duplicate key "${keyText(pair.key)}": a key may appear only once in a map`,
      });
    }
    if (repeats.length > 0) return fail();
    locator = createLocator(doc, lineCounter, split.yamlOrigin);
    try {
      data = doc.toJS({ maxAliasCount: 100 }) ?? {};
    } catch (error) {
      diagnostics.push({
        ...at(file, split.yamlOrigin.line, 1),
        severity: 'error',
        code: 'workflow.yaml_syntax',
        message: describeError(error),
      });
      return fail();
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    diagnostics.push({
      ...at(file, split.yamlOrigin.line, 1),
      severity: 'error',
      code: 'workflow.front_matter.not_map',
      message: 'front matter must be a YAML map of keys (tracker:, agent:, …)',
    });
    return fail();
  }
  const fileLocator = locator;
  // The reference formats' keys become ours first; their diagnostics point at the keys as written.
  const mapped = mapReferenceFormats(data as Record<string, unknown>, {
    agentKinds: options.kinds?.agentKinds ?? [],
    lineOf: (keyPath) => fileLocator?.locateKey(keyPath)?.line ?? null,
  });
  let rawMap = mapped.raw;
  let fromEnv: ReadonlyMap<string, string> = new Map();
  const place = (issue: ConfigIssue): Diagnostic => {
    // A value that came from an ORCHESTRATOR_* variable (a list item of one included) has no
    // place in the file: name the variable.
    const variable = variableOf(fromEnv, issue.path);
    const written = writtenAt(mapped.moved, issue.path);
    const pos =
      locator !== null && issue.path.length > 0 && variable === undefined ? locator.locate(written) : null;
    return {
      severity: issue.severity,
      code: issue.code,
      message: variable === undefined ? issue.message : `${issue.message} (from ${variable})`,
      file,
      line: pos?.line ?? null,
      column: pos?.column ?? null,
      ...(issue.path.length > 0 ? { path: issue.path.join('.') } : {}),
    };
  };

  const atKey = (i: ConfigIssue): Diagnostic => {
    const pos = fileLocator?.locateKey(writtenAt(mapped.moved, i.path)) ?? null;
    return { ...place(i), line: pos?.line ?? null, column: pos?.column ?? null };
  };
  diagnostics.push(...mapped.issues.map(atKey));

  const overrides = applyEnvOverrides(rawMap, env);
  diagnostics.push(...overrides.issues.map((i) => ({ ...place(i), line: null, column: null })));
  fromEnv = overrides.overridden;

  if (locator !== null) diagnostics.push(...unknownKeyWarnings(rawMap, options.kinds).map(atKey));
  const defaulted = applyKindDefaults(rawMap, options.kinds?.trackerTraits, env);
  rawMap = defaulted.raw;
  diagnostics.push(...defaulted.issues.map(atKey));
  const parsed = parseLeniently(rawMap);
  diagnostics.push(...parsed.issues.map(place));
  if (parsed.data === null) return fail();

  const built = buildServiceConfig(parsed.data, {
    workflowPath: file,
    env,
    overridden: overrides.overridden,
  });
  // Blocks of several agent kinds and no agent.kind was reported as ambiguous, naming them: once is enough.
  const ambiguous = mapped.issues.some((i) => i.code === 'agent.kind.ambiguous');
  diagnostics.push(...built.issues.filter((i) => !(ambiguous && i.code === 'agent.kind.missing')).map(place));
  if (options.kinds) {
    // A key whose value already failed (`$GITHUB_TOKEN` unset) is not reported again by the kind's rules.
    const failed = new Set(
      [...parsed.issues, ...built.issues].filter((i) => i.severity === 'error').map((i) => i.path.join('.')),
    );
    const fresh = kindIssues(built.config, options.kinds, rawMap, env).filter(
      (i) => !failed.has(i.path.join('.')),
    );
    diagnostics.push(...fresh.map(place));
  }
  if (options.localFiles !== undefined) {
    diagnostics.push(...missingFiles(built.config, options.kinds, options.localFiles).map(place));
  }

  const mcpConfig = built.config.agent.mcpConfigPath;
  if (mcpConfig !== null) {
    const read = readMcpConfig(mcpConfig, env);
    diagnostics.push(...read.issues.map(atKey));
    built.config.agent.mcpServers = read.tools;
  }

  if (options.checkRender === true && built.config.git !== null) {
    diagnostics.push(...gitTemplateIssues(built.config.git).map(atKey));
  }

  if (split.body === '') {
    diagnostics.push({
      ...at(file, split.bodyOrigin.line, 1),
      severity: 'error',
      code: 'workflow.prompt.empty',
      message: 'the prompt template (the text after the front matter) is empty',
    });
  }
  const compiled = compilePrompt(split.body, { file, ...split.bodyOrigin });
  if (!compiled.ok) diagnostics.push(...compiled.diagnostics);
  else if (options.checkRender === true) diagnostics.push(...checkCompiled(compiled.template));

  if (diagnostics.some((d) => d.severity === 'error') || !compiled.ok) return fail();
  return {
    ok: true,
    workflow: {
      config: built.config,
      template: compiled.template,
      promptSource: split.body,
      promptOrigin: split.bodyOrigin,
      diagnostics: sortDiagnostics(diagnostics),
    },
  };
}

/**
 * zod compiles a fast path (with `new Function`) for each object schema on its first parse; a
 * workflow is parsed once per load, so compiling costs more than it saves.
 */
const ONE_SHOT = { jitless: true } as const;

/**
 * Parses the front matter; a key that fails the schema is reported and then
 * dropped (its default applies) so the remaining checks still run and the
 * operator sees every problem in one pass.
 */
function parseLeniently(raw: Record<string, unknown>): { data: FrontMatter | null; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  // Keyed by code and path; with thousands of bad values, scanning the list per issue was quadratic.
  const reported = new Set<string>();
  let current: Record<string, unknown> = structuredClone(raw);
  for (let round = 0; round < 20; round++) {
    const parsed = frontMatterSchema.safeParse(current, ONE_SHOT);
    if (parsed.success) return { data: parsed.data, issues };
    const failing: (readonly (string | number)[])[] = [];
    for (const issue of parsed.error.issues) {
      const converted = schemaIssue(issue, current);
      const key = JSON.stringify([converted.code, converted.path]);
      if (!reported.has(key)) {
        reported.add(key);
        issues.push(converted);
      }
      failing.push(converted.path);
    }
    current = withoutPaths(current, failing);
  }
  return { data: null, issues };
}

/**
 * A copy of `raw` without the values at `keyPaths` (one copy for all of them, not one per path).
 * List items go from the highest index down, so removing one does not shift the next.
 */
function withoutPaths(
  raw: Record<string, unknown>,
  keyPaths: readonly (readonly (string | number)[])[],
): Record<string, unknown> {
  if (keyPaths.some((keyPath) => keyPath.length === 0)) return {};
  const copy = structuredClone(raw);
  const parentOf = (keyPath: readonly (string | number)[]): unknown => {
    let node: unknown = copy;
    for (const key of keyPath.slice(0, -1)) {
      if (node === null || typeof node !== 'object') return null;
      node = (node as Record<string | number, unknown>)[key];
    }
    return node;
  };
  const byIndexDescending = [...keyPaths].sort((a, b) => {
    const last = (p: readonly (string | number)[]) => p[p.length - 1];
    const [x, y] = [last(a), last(b)];
    return typeof x === 'number' && typeof y === 'number' ? y - x : 0;
  });
  for (const keyPath of byIndexDescending) {
    const node = parentOf(keyPath);
    if (node === null || typeof node !== 'object') continue;
    const last = keyPath[keyPath.length - 1] as string | number;
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete (node as Record<string | number, unknown>)[last];
  }
  return copy;
}

/** Reads the opt-in `.env` file and layers the real environment over it. */
function loadEnv(options: LoadOptions, diagnostics: Diagnostic[]): Env {
  const envFile = options.envFile ?? options.env.ORCHESTRATOR_ENV_FILE;
  if (envFile === undefined || envFile.trim() === '') return options.env;
  const envPath = path.resolve(envFile);
  let text: string;
  try {
    text = readFileSync(envPath, 'utf8');
  } catch (error) {
    diagnostics.push(
      fileError(envPath, 'env_file.not_found', `cannot read env file: ${describeError(error)}`),
    );
    return options.env;
  }
  const parsed = parseDotenv(text, envPath);
  diagnostics.push(...parsed.diagnostics);
  const real = Object.fromEntries(Object.entries(options.env).filter(([, v]) => v !== undefined && v !== ''));
  return { ...parsed.vars, ...real };
}

function kindIssues(
  config: ServiceConfig,
  kinds: KindCatalog,
  blocks: Record<string, unknown>,
  env: Env,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const t = config.tracker.kind;
  if (t !== '' && !kinds.trackerKinds.includes(t)) {
    const hint = closest(t, kinds.trackerKinds);
    issues.push({
      severity: 'error',
      code: 'tracker.kind.unknown',
      message: `unknown tracker kind "${t}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${kinds.trackerKinds.join(', ')}`,
      path: ['tracker', 'kind'],
    });
  } else if (t !== '') {
    const block = blocks[t];
    if (block !== undefined && block !== null && (typeof block !== 'object' || Array.isArray(block))) {
      issues.push({
        severity: 'error',
        code: `${t}.invalid`,
        message: `${t} must be a map of keys (for example "${t}:" followed by indented settings)`,
        path: [t],
      });
    } else {
      issues.push(...kinds.checkTracker(config.tracker));
      const git = config.git;
      if (git?.push && git.pullRequest.enabled && kinds.trackerTraits?.(t)?.hasForge !== true) {
        issues.push({
          severity: 'warning',
          code: 'git.pull_request.no_forge',
          message: `tracker kind "${t}" cannot open pull requests: branches are pushed, and no pull request is opened (set git.pull_request.enabled: false to say so)`,
          path: ['git', 'pull_request', 'enabled'],
        });
      }
    }
  }
  const a = config.agent.kind;
  if (a !== '' && !kinds.agentKinds.includes(a)) {
    const hint = closest(a, kinds.agentKinds);
    issues.push({
      severity: 'error',
      code: 'agent.kind.unknown',
      message: `unknown agent kind "${a}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${kinds.agentKinds.join(', ')}`,
      path: ['agent', 'kind'],
    });
  }
  // Every agent block present is checked, not only the active kind's: switching
  // agent.kind later should not uncover errors that were there all along.
  for (const kind of kinds.agentKinds) {
    const block = blocks[kind];
    const isMap = block !== null && typeof block === 'object' && !Array.isArray(block);
    if (block !== undefined && block !== null && !isMap) {
      issues.push({
        severity: 'error',
        code: `${kind}.invalid`,
        message: `${kind} must be a map of keys`,
        path: [kind],
      });
    } else if (kind === a || isMap) {
      const options = isMap ? (block as Record<string, unknown>) : {};
      issues.push(
        ...(kind === a
          ? kinds.checkAgent(kind, options, {
              command: config.agent.command,
              maxTokens: config.agent.maxTokens,
              trackerToken: config.tracker.apiKey,
              env,
              toolsEnabled: config.tools.enabled,
            })
          : kinds.checkAgent(kind, options)),
      );
    }
  }
  for (const kind of Object.keys(config.tokenRates)) {
    if (!kinds.agentKinds.includes(kind)) {
      issues.push({
        severity: 'warning',
        code: 'token_rates.unknown_kind',
        message: `token_rates.${kind} names no known agent kind`,
        path: ['token_rates', kind],
      });
    }
  }
  return issues;
}

/** The problems with the files on this machine that the service would read. */
function missingFiles(
  config: ServiceConfig,
  kinds: KindCatalog | undefined,
  severity: Severity,
): ConfigIssue[] {
  const files: LocalFile[] = [...(kinds?.trackerFiles?.(config.tracker) ?? [])];
  if (config.worker.identityFile !== null) {
    files.push({
      path: config.worker.identityFile,
      key: ['worker', 'ssh_identity_file'],
      what: 'the SSH key',
    });
  }
  return files.flatMap((file) => localFileIssue(file, severity) ?? []);
}

/** Walks the raw map against the schema's known keys; unknown ones become warnings with a suggestion. */
function unknownKeyWarnings(raw: Record<string, unknown>, kinds: KindCatalog | undefined): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const blocks = kinds ? [...kinds.trackerKinds, ...kinds.agentKinds] : null;
  const walk = (node: Record<string, unknown>, at: string[]) => {
    const known = knownKeys(at);
    if (known === null) return;
    const allowed = at.length === 0 ? [...known, ...(blocks ?? [])] : known;
    for (const [key, value] of Object.entries(node)) {
      if (!allowed.includes(key)) {
        if (at.length === 0 && blocks === null) continue;
        const hint = closest(key, allowed);
        const where = [...at, key].join('.');
        issues.push({
          severity: 'warning',
          code: 'config.unknown_key',
          message: `unknown key "${where}"${hint ? ` (did you mean "${[...at, hint].join('.')}"?)` : ''}`,
          path: [...at, key],
        });
      } else if (
        value !== null &&
        typeof value === 'object' &&
        !Array.isArray(value) &&
        known.includes(key)
      ) {
        walk(value as Record<string, unknown>, [...at, key]);
      }
    }
  };
  walk(raw, []);
  return issues;
}

function yamlDiagnostic(
  file: string,
  lineCounter: LineCounter,
  origin: Origin,
  e: YAMLParseError | YAMLWarning,
  severity: 'error' | 'warning',
): Diagnostic {
  const pos = toPosition(lineCounter, origin, e.pos[0]);
  const firstLine = e.message.split('\n')[0] ?? e.message;
  const code =
    e.code === 'DUPLICATE_KEY'
      ? 'workflow.yaml_duplicate_key'
      : severity === 'error'
        ? 'workflow.yaml_syntax'
        : 'workflow.yaml_warning';
  return {
    severity,
    code,
    message: firstLine.replace(/ at line \d+, column \d+:?$/, ''),
    file,
    line: pos.line,
    column: pos.column,
  };
}

/** Where a key moved by the reference-format mapping was written; other paths as they are. */
function writtenAt(
  moved: ReadonlyMap<string, readonly (string | number)[]>,
  keyPath: readonly (string | number)[],
): readonly (string | number)[] {
  for (let length = keyPath.length; length > 0; length--) {
    const from = moved.get(keyPath.slice(0, length).join('.'));
    if (from !== undefined) return [...from, ...keyPath.slice(length)];
  }
  return keyPath;
}

/** The variable a key path's value came from: the path's own, or a parent's (a list set by one variable). */
function variableOf(
  fromEnv: ReadonlyMap<string, string>,
  keyPath: readonly (string | number)[],
): string | undefined {
  for (let length = keyPath.length; length > 0; length--) {
    const variable = fromEnv.get(keyPath.slice(0, length).join('.'));
    if (variable !== undefined) return variable;
  }
  return undefined;
}

/** A workflow path that names a directory: point at the file inside when there is one. */
function directoryMessage(dir: string): string {
  const inside = path.join(dir, 'WORKFLOW.md');
  return existsSync(inside)
    ? `${dir} is a directory, not a workflow file: did you mean ${inside}?`
    : `${dir} is a directory, not a workflow file: name the workflow file in it`;
}

function at(file: string, line: number, column: number): Pick<Diagnostic, 'file' | 'line' | 'column'> {
  return { file, line, column };
}

function fileError(file: string, code: string, message: string): Diagnostic {
  return { severity: 'error', code, message, file, line: null, column: null };
}

function describeError(error: unknown): string {
  if (error instanceof Error)
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? `no such file`
      : (error.message.split('\n')[0] ?? '');
  return String(error);
}

/** Orders diagnostics by line so the output reads top to bottom like a compiler's. */
export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

/** The git block's templates, rendered against the sample issue like the prompt is. */
function gitTemplateIssues(git: GitConfig): ConfigIssue[] {
  const vars = promptVariables({
    issue: SAMPLE_ISSUE,
    attempt: 1,
    turn: 1,
    maxTurns: 1,
    workspacePath: '/var/lib/orchestrator/workspaces/ENG-42',
  });
  const templates: [string[], string][] = [
    [['git', 'branch'], git.branchTemplate],
    [['git', 'pull_request', 'title'], git.pullRequest.titleTemplate],
    [['git', 'pull_request', 'body'], git.pullRequest.bodyTemplate],
  ];
  const issues: ConfigIssue[] = [];
  for (const [at, source] of templates) {
    const rendered = renderText(source, vars, { file: '', line: 1, column: 1 });
    if (!rendered.ok) {
      issues.push({
        severity: 'error',
        code: `${at.join('.')}.template`,
        message: `${at.join('.')}: ${firstProblem(rendered.diagnostics)}`,
        path: at,
      });
    }
  }
  return issues;
}
