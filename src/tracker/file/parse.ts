/**
 * The pure issues-file parser: text in, normalised issues (plus an editable source
 * for writes) or one coded error that names the file and the 1-based line out.
 * An operator fixing a hand-edited file needs the line; "invalid JSON" alone is not
 * enough. It never throws on any input, so a bad save cannot crash a tick.
 */
import { type Document, isMap, isNode, isSeq, LineCounter, parseDocument, type YAMLSeq } from 'yaml';
import { TrackerError } from '../../domain/errors.js';
import type { Issue } from '../../domain/issue.js';
import { lineAt, lineIndex, scanJson } from './json-scan.js';
import { normaliseIssue, resolveBlockers } from './normalise.js';

/** How the file is written: decided by its extension, or by content when the extension says neither. */
export type IssuesFormat = 'json' | 'yaml';

/** A bare list of issues, or an object holding them under `issues`; writes keep whichever the file has. */
export type IssuesShape = 'list' | 'wrapped';

/** Stable codes for what is wrong with an issues file. */
export type IssuesFileErrorCode =
  | 'file.unreadable'
  | 'file.syntax'
  | 'file.shape'
  | 'file.issue.invalid'
  | 'file.issue.duplicate';

/** A bad issues file: a tracker_payload_error that also carries the file, the 1-based line and a code. */
export class IssuesFileError extends TrackerError {
  constructor(
    readonly code: IssuesFileErrorCode,
    readonly file: string,
    /** 1-based; null when the problem has no place in the file (it could not be read). */
    readonly line: number | null,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      'tracker_payload_error',
      line === null ? `${file}: ${reason}` : `${file}:${line}: ${reason}`,
      options,
    );
  }
}

/** The parsed file as an editable value: the JSON root, or the YAML document (comments and layout kept). */
export type IssuesSource =
  | { format: 'json'; root: unknown; list: unknown[] }
  | { format: 'yaml'; doc: Document.Parsed; list: YAMLSeq };

/** A successfully parsed issues file. */
export interface ParsedIssuesFile {
  format: IssuesFormat;
  shape: IssuesShape;
  /** In file order; `comments` keeps its tri-state (null = the file has none). */
  issues: Issue[];
  /** 1-based start line of each issue, parallel to `issues`. */
  lines: number[];
  source: IssuesSource;
  /** The text that was parsed, for writers that keep its layout (indent, line endings, BOM). */
  text: string;
}

/** The parse outcome; a failure is always a tracker_payload_error. */
export type ParseResult = { ok: true; value: ParsedIssuesFile } | { ok: false; error: IssuesFileError };

/** The format an extension implies: `.json` → json, `.yaml`/`.yml` → yaml, anything else → auto (JSON, then YAML). */
export function formatForPath(path: string): IssuesFormat | 'auto' {
  const lower = path.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  return 'auto';
}

interface RawItem {
  value: unknown;
  line: number;
}

type Structure =
  | { ok: true; shape: IssuesShape; items: RawItem[]; source: IssuesSource }
  | { ok: false; error: IssuesFileError };

const SHAPE_REASON = 'expected a list of issues, or an object with an "issues" list';

/** Parses the text of an issues file; `file` is only used to name the file in errors. */
export function parseIssuesText(text: string, file: string, format: IssuesFormat | 'auto'): ParseResult {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let structure: Structure;
  if (format === 'json') structure = readJson(body, file);
  else if (format === 'yaml') structure = readYaml(body, file);
  else {
    structure = readJson(body, file);
    if (!structure.ok && structure.error.code === 'file.syntax') {
      const yaml = readYaml(body, file);
      const looksLikeJson = /^\s*[[{]/.test(body);
      if (yaml.ok || yaml.error.code !== 'file.syntax' || !looksLikeJson) structure = yaml;
    }
  }
  if (!structure.ok) return structure;
  return validate(structure, text, file);
}

function fail(
  code: IssuesFileErrorCode,
  file: string,
  line: number,
  reason: string,
): { ok: false; error: IssuesFileError } {
  return { ok: false, error: new IssuesFileError(code, file, line, reason) };
}

/** The line of an error offset; an offset at the end of the file points at its last non-blank line. */
function errorLine(text: string, offset: number): number {
  if (offset < text.length) return lineAt(text, offset);
  const trimmed = text.trimEnd();
  return lineAt(trimmed, Math.max(trimmed.length - 1, 0));
}

function readJson(text: string, file: string): Structure {
  const scan = scanJson(text);
  if (!scan.ok) {
    const reason = text.trim() === '' ? 'the file is empty' : `invalid JSON: ${scan.message}`;
    return fail('file.syntax', file, errorLine(text, scan.offset), reason);
  }
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (err) {
    return fail('file.syntax', file, 1, `invalid JSON: ${String(err)}`);
  }
  const node = scan.root;
  const lineOf = lineIndex(text);
  if (node.kind === 'array' && Array.isArray(root)) {
    const items = node.items.map((item, i) => ({ value: root[i], line: lineOf(item.start) }));
    return { ok: true, shape: 'list', items, source: { format: 'json', root, list: root } };
  }
  if (node.kind === 'object' && typeof root === 'object' && root !== null && !Array.isArray(root)) {
    const listNode = node.entries.get('issues');
    const list = (root as Record<string, unknown>).issues;
    if (listNode === undefined) return fail('file.shape', file, lineOf(node.start), SHAPE_REASON);
    if (listNode.kind !== 'array' || !Array.isArray(list)) {
      return fail('file.shape', file, lineOf(listNode.start), '"issues" must be a list');
    }
    const items = listNode.items.map((item, i) => ({ value: list[i], line: lineOf(item.start) }));
    return { ok: true, shape: 'wrapped', items, source: { format: 'json', root, list } };
  }
  return fail('file.shape', file, lineOf(node.start), SHAPE_REASON);
}

function readYaml(text: string, file: string): Structure {
  const lineCounter = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true, logLevel: 'error' });
  } catch (err) {
    return fail('file.syntax', file, 1, `invalid YAML: ${String(err)}`);
  }
  const line = (offset: number | undefined): number => lineCounter.linePos(offset ?? 0).line;
  const first = doc.errors[0];
  if (first !== undefined) {
    const reason = (first.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    return fail(
      'file.syntax',
      file,
      first.linePos?.[0].line ?? line(first.pos[0]),
      `invalid YAML: ${reason}`,
    );
  }
  const contents = doc.contents;
  if (contents === null) return fail('file.syntax', file, 1, 'the file is empty');
  let shape: IssuesShape;
  let seq: YAMLSeq;
  if (isSeq(contents)) {
    shape = 'list';
    seq = contents;
  } else if (isMap(contents)) {
    const listNode = contents.get('issues', true);
    if (listNode === undefined) return fail('file.shape', file, line(contents.range[0]), SHAPE_REASON);
    if (!isSeq(listNode)) {
      return fail(
        'file.shape',
        file,
        line(isNode(listNode) ? listNode.range?.[0] : undefined),
        '"issues" must be a list',
      );
    }
    shape = 'wrapped';
    seq = listNode;
  } else {
    return fail('file.shape', file, line(contents.range[0]), SHAPE_REASON);
  }
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return fail('file.syntax', file, 1, `invalid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  const list = shape === 'list' ? js : (js as Record<string, unknown> | null)?.issues;
  if (!Array.isArray(list)) return fail('file.shape', file, line(seq.range?.[0]), '"issues" must be a list');
  const items = seq.items.map((item, i) => ({
    value: list[i],
    line: line(isNode(item) ? item.range?.[0] : seq.range?.[0]),
  }));
  return { ok: true, shape, items, source: { format: 'yaml', doc, list: seq } };
}

function validate(structure: Structure & { ok: true }, text: string, file: string): ParseResult {
  const issues: Issue[] = [];
  const lines: number[] = [];
  const ids = new Map<string, number>();
  const identifiers = new Map<string, number>();
  for (const { value, line } of structure.items) {
    const result = normaliseIssue(value);
    if (!result.ok) return fail('file.issue.invalid', file, line, result.reason);
    const { id, identifier } = result.issue;
    const firstId = ids.get(id);
    if (firstId !== undefined) {
      return fail(
        'file.issue.duplicate',
        file,
        line,
        `duplicate issue id "${id}" (first used at line ${firstId})`,
      );
    }
    const firstIdentifier = identifiers.get(identifier);
    if (firstIdentifier !== undefined) {
      return fail(
        'file.issue.duplicate',
        file,
        line,
        `duplicate issue identifier "${identifier}" (first used at line ${firstIdentifier})`,
      );
    }
    ids.set(id, line);
    identifiers.set(identifier, line);
    issues.push(result.issue);
    lines.push(line);
  }
  return {
    ok: true,
    value: {
      format: structure.source.format,
      shape: structure.shape,
      issues: resolveBlockers(issues),
      lines,
      source: structure.source,
      text,
    },
  };
}
