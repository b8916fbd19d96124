/**
 * The pure issues-file parser: the file's bytes in, normalised issues indexed by id (plus
 * where each JSON issue sits in the bytes, for edits) or one coded error that names the
 * file and the 1-based line out.
 * An operator fixing a hand-edited file needs the line; "invalid JSON" alone is not
 * enough. It never throws on any input, so a bad save cannot crash a tick.
 */
import { type Document, isMap, isNode, isSeq, LineCounter, parseDocument, type YAMLSeq } from 'yaml';
import { TrackerError } from '../../domain/errors.js';
import type { Issue } from '../../domain/issue.js';
import {
  decodeUtf8,
  type ExpandRule,
  isJsonSpace,
  type JsonNode,
  lineAt,
  memberOf,
  scanJson,
} from './json-scan.js';
import { normaliseIssue, resolveBlockers } from './normalise.js';

/** How the file is written: decided by its extension, or by content when the extension says neither. */
export type IssuesFormat = 'json' | 'yaml';

/** A bare list of issues, or an object holding them under `issues`; writes keep whichever the file has. */
export type IssuesShape = 'list' | 'wrapped';

/** Stable codes for what is wrong with an issues file; `file.unpreservable` refuses a write that could not keep every other byte. */
export type IssuesFileErrorCode =
  | 'file.unreadable'
  | 'file.syntax'
  | 'file.shape'
  | 'file.issue.invalid'
  | 'file.issue.duplicate'
  | 'file.unpreservable';

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

/** A successfully parsed issues file, indexed for lookups and kept for byte-exact edits. */
export interface ParsedIssuesFile {
  format: IssuesFormat;
  shape: IssuesShape;
  /** The file exactly as read, BOM included: writes splice into these bytes. */
  bytes: Uint8Array;
  /** In file order, before blocker resolution: what each issue's own text says. */
  normalised: Issue[];
  /** In file order, blockers resolved; `comments` keeps its tri-state (null = the file has none). */
  issues: Issue[];
  /** 1-based start line of each issue, parallel to `issues`. */
  lines: number[];
  /** Position in `issues` of each id. */
  byId: ReadonlyMap<string, number>;
  /** Position in `issues` of each identifier. */
  byIdentifier: ReadonlyMap<string, number>;
  /** JSON only: issue i spans bytes [spans[2i], spans[2i+1]); null for YAML. */
  spans: Float64Array | null;
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
  | { ok: true; shape: IssuesShape; items: RawItem[]; spans: Float64Array | null }
  | { ok: false; error: IssuesFileError };

const SHAPE_REASON = 'expected a list of issues, or an object with an "issues" list';

const BOM = [0xef, 0xbb, 0xbf];

/** Parses an issues file as read from disk; `file` is only used to name the file in errors. */
export function parseIssues(bytes: Uint8Array, file: string, format: IssuesFormat | 'auto'): ParseResult {
  const bodyStart = BOM.every((b, i) => bytes[i] === b) ? BOM.length : 0;
  const body = bytes.subarray(bodyStart);
  let structure: Structure;
  if (format === 'json') structure = readJson(body, bodyStart, file);
  else if (format === 'yaml') structure = readYaml(decodeUtf8(body), file);
  else {
    structure = readJson(body, bodyStart, file);
    if (!structure.ok && structure.error.code === 'file.syntax') {
      const text = decodeUtf8(body);
      const yaml = readYaml(text, file);
      const looksLikeJson = /^\s*[[{]/.test(text);
      if (yaml.ok || yaml.error.code !== 'file.syntax' || !looksLikeJson) structure = yaml;
    }
  }
  if (!structure.ok) return structure;
  return validate(structure, bytes, file);
}

/** `parseIssues` over text (encoded as UTF-8), for callers and tests that hold a string. */
export function parseIssuesText(text: string, file: string, format: IssuesFormat | 'auto'): ParseResult {
  return parseIssues(new TextEncoder().encode(text), file, format);
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
function errorLine(bytes: Uint8Array, offset: number): number {
  if (offset < bytes.length) return lineAt(bytes, offset);
  let end = bytes.length;
  while (end > 0 && isJsonSpace(bytes[end - 1])) end--;
  return lineAt(bytes, Math.max(end - 1, 0));
}

function isBlank(bytes: Uint8Array): boolean {
  return bytes.every((b) => isJsonSpace(b));
}

/** Expands the root and a list under it (the issues), never an issue itself: issues are parsed one by one. */
const ISSUE_LIST_ONLY: ExpandRule = (depth, kind) => depth === 0 || (depth === 1 && kind === 'array');

/** Reads a JSON body; `base` is the body's offset in the file (a BOM), so spans are file offsets. */
function readJson(body: Uint8Array, base: number, file: string): Structure {
  const scan = scanJson(body, { expand: ISSUE_LIST_ONLY });
  if (!scan.ok) {
    const reason = isBlank(body) ? 'the file is empty' : `invalid JSON: ${scan.message}`;
    return fail('file.syntax', file, errorLine(body, scan.offset), reason);
  }
  const node = scan.root;
  const lineOf = (offset: number) => lineAt(body, offset);
  let list: JsonNode;
  let shape: IssuesShape;
  if (node.kind === 'array') {
    shape = 'list';
    list = node;
  } else if (node.kind === 'object') {
    const member = memberOf(node, 'issues');
    if (member === undefined) return fail('file.shape', file, lineOf(node.start), SHAPE_REASON);
    if (member.value.kind !== 'array') {
      return fail('file.shape', file, lineOf(member.value.start), '"issues" must be a list');
    }
    shape = 'wrapped';
    list = member.value;
  } else {
    return fail('file.shape', file, lineOf(node.start), SHAPE_REASON);
  }
  const nodes = list.kind === 'array' ? list.items : [];
  const spans = new Float64Array(nodes.length * 2);
  const items: RawItem[] = [];
  const buffer = Buffer.from(body.buffer, body.byteOffset, body.length);
  // Items come in file order, so one pass over the bytes gives every item its line.
  let line = 1;
  let counted = 0;
  for (const [i, item] of nodes.entries()) {
    for (; counted < item.start; counted++) if (body[counted] === 0x0a) line++;
    spans[2 * i] = base + item.start;
    spans[2 * i + 1] = base + item.end;
    let value: unknown;
    try {
      // Each issue is parsed on its own: no whole-file object graph, and nothing outside the list is parsed.
      value = JSON.parse(buffer.toString('utf8', item.start, item.end));
    } catch (err) {
      return fail('file.syntax', file, line, `invalid JSON: ${String(err)}`);
    }
    items.push({ value, line });
  }
  return { ok: true, shape, items, spans };
}

function readYaml(text: string, file: string): Structure {
  const lineCounter = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseYamlDocument(text, lineCounter);
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
  const located = issuesSeq(doc);
  if (!located.ok) {
    return fail(
      'file.shape',
      file,
      line(located.offset),
      located.listIsWrong ? '"issues" must be a list' : SHAPE_REASON,
    );
  }
  const { shape, seq } = located;
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
  return { ok: true, shape, items, spans: null };
}

/** Parses YAML the one way both reads and writes do (unique keys, errors only), so their offsets agree. */
export function parseYamlDocument(text: string, lineCounter?: LineCounter): Document.Parsed {
  return parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true, logLevel: 'error' });
}

/** The sequence holding the issues of a parsed YAML document, or the offset of what is there instead. */
export function issuesSeq(
  doc: Document.Parsed,
):
  | { ok: true; shape: IssuesShape; seq: YAMLSeq }
  | { ok: false; offset: number | undefined; listIsWrong: boolean } {
  const contents = doc.contents;
  if (isSeq(contents)) return { ok: true, shape: 'list', seq: contents };
  if (isMap(contents)) {
    const listNode = contents.get('issues', true);
    if (listNode === undefined) return { ok: false, offset: contents.range[0], listIsWrong: false };
    if (!isSeq(listNode)) {
      return { ok: false, offset: isNode(listNode) ? listNode.range?.[0] : undefined, listIsWrong: true };
    }
    return { ok: true, shape: 'wrapped', seq: listNode };
  }
  return { ok: false, offset: contents?.range?.[0], listIsWrong: false };
}

function validate(structure: Structure & { ok: true }, bytes: Uint8Array, file: string): ParseResult {
  const normalised: Issue[] = [];
  const lines: number[] = [];
  const byId = new Map<string, number>();
  const byIdentifier = new Map<string, number>();
  for (const { value, line } of structure.items) {
    const result = normaliseIssue(value);
    if (!result.ok) return fail('file.issue.invalid', file, line, result.reason);
    const { id, identifier } = result.issue;
    const firstId = byId.get(id);
    if (firstId !== undefined) {
      return fail(
        'file.issue.duplicate',
        file,
        line,
        `duplicate issue id "${id}" (first used at line ${lines[firstId]})`,
      );
    }
    const firstIdentifier = byIdentifier.get(identifier);
    if (firstIdentifier !== undefined) {
      return fail(
        'file.issue.duplicate',
        file,
        line,
        `duplicate issue identifier "${identifier}" (first used at line ${lines[firstIdentifier]})`,
      );
    }
    byId.set(id, normalised.length);
    byIdentifier.set(identifier, normalised.length);
    normalised.push(result.issue);
    lines.push(line);
  }
  return {
    ok: true,
    value: {
      format: structure.spans === null ? 'yaml' : 'json',
      shape: structure.shape,
      bytes,
      normalised,
      issues: resolveBlockers(normalised, byId, byIdentifier),
      lines,
      byId,
      byIdentifier,
      spans: structure.spans,
    },
  };
}
