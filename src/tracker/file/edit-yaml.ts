/**
 * Edits of a YAML issue as splices of the source text, located through the yaml document's
 * node ranges. Re-serialising the document would re-quote scalars, reflow spacing and
 * rewrite numbers (`1e3` → `1000`) all over the file; a splice touches the edited node only.
 * Layouts this writer cannot extend in place (an aliased or anchored issue, a block-scalar
 * state, a file that is not valid UTF-8, which the text offsets cannot map back to bytes)
 * are refused, not rewritten.
 */
import { isMap, isScalar, isSeq, type Pair, parse, type Scalar, stringify, type YAMLMap } from 'yaml';
import { decodeUtf8 } from './json-scan.js';
import { issuesSeq, parseYamlDocument } from './parse.js';
import { assertNever, type IssueEdit, refuse, type SpliceResult } from './splice.js';

const BOM_BYTES = 3;

/** A splice of the source text (UTF-16 offsets), before it is turned into byte offsets. */
interface TextSplice {
  start: number;
  end: number;
  insert: string;
}

type TextResult = { ok: true; splice: TextSplice } | { ok: false; reason: string };

/** How new YAML is written: copied from what the file already does. */
interface Style {
  newline: string;
  indentSeq: boolean;
  flowCollectionPadding: boolean;
}

/** The splice that applies `edit` to the issue at `index` (file order) of a YAML file. */
export function yamlSplice(bytes: Uint8Array, index: number, edit: IssueEdit): SpliceResult {
  const bodyStart = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? BOM_BYTES : 0;
  const body = bytes.subarray(bodyStart);
  const text = decodeUtf8(body);
  const encoder = new TextEncoder();
  if (!sameBytes(encoder.encode(text), body)) {
    return refuse('the file is not valid UTF-8, so its YAML cannot be edited without changing other bytes');
  }
  const doc = parseYamlDocument(text);
  if (doc.errors.length > 0) return refuse('the file no longer parses as YAML');
  const located = issuesSeq(doc);
  if (!located.ok) return refuse('the file holds no list of issues');
  const item = located.seq.items[index];
  if (!isMap(item)) return refuse('the issue is an alias or not a mapping');
  if (item.anchor !== undefined)
    return refuse(`the issue carries the anchor &${item.anchor}, which other nodes may share`);
  const style: Style = {
    newline: text.includes('\r\n') ? '\r\n' : '\n',
    indentSeq: indentsSequences(text),
    flowCollectionPadding: /[[{] \S/.test(text),
  };
  const result = editMap(text, item, edit, style);
  if (!result.ok) return result;
  const { start, end, insert } = result.splice;
  const byteOffset = (offset: number) => bodyStart + encoder.encode(text.slice(0, offset)).length;
  return { ok: true, splice: { start: byteOffset(start), end: byteOffset(end), insert } };
}

function editMap(text: string, map: YAMLMap, edit: IssueEdit, style: Style): TextResult {
  switch (edit.type) {
    case 'state': {
      const value = pairOf(map, 'state')?.value;
      if (!isScalar(value) || value.range == null)
        return refuse('the issue\'s "state" is not a plain scalar');
      const scalar = scalarText(edit.state, value);
      if (scalar === null) return refuse('the issue\'s "state" is a block scalar or carries an anchor');
      return { ok: true, splice: { start: value.range[0], end: value.range[1], insert: scalar } };
    }
    case 'comment':
      return appendTo(text, map, 'comments', edit.comment, style);
    case 'label':
      return appendTo(text, map, 'labels', edit.label, style);
    default:
      return assertNever(edit);
  }
}

function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((pair) => (isScalar(pair.key) ? pair.key.value : pair.key) === key);
}

/** Appends `item` to the list under `key`, creating the list (or the key) when there is none. */
function appendTo(text: string, map: YAMLMap, key: string, item: unknown, style: Style): TextResult {
  const pair = pairOf(map, key);
  if (pair === undefined) return addPair(text, map, key, [item], style);
  const value = pair.value;
  if (isSeq(value) && value.range != null) {
    if (value.anchor !== undefined) return refuse(`"${key}" carries the anchor &${value.anchor}`);
    const last = value.items[value.items.length - 1];
    if (value.flow) {
      if (last === undefined) return replace(value.range[0], value.range[1], flowText([item], style));
      const end = nodeEnd(last);
      if (end === undefined) return refuse(`the last item of "${key}" has no position`);
      return replace(end, end, `, ${flowText([item], style).slice(1, -1).trim()}`);
    }
    const at = value.range[1];
    const column = columnOf(text, value.range[0], true);
    if (column === null || !atLineStart(text, at))
      return refuse(`the list under "${key}" is laid out unusually`);
    return replace(at, at, lineBreakFor(text, at, style) + blockText([item], column, style));
  }
  if (isScalar(value) && value.value === null && value.range != null && pair.key !== null) {
    if (map.flow) return replace(value.range[0], value.range[1], flowText([item], style));
    const keyStart = nodeStart(pair.key);
    const column = keyStart === undefined ? null : columnOf(text, keyStart, false);
    if (keyStart === undefined || column === null) return refuse(`the key "${key}" is laid out unusually`);
    // The rest of the line (` # none yet`) stays on the key's line, ahead of the new items.
    const lineEnd = text.slice(value.range[1]).search(/\r?\n|$/) + value.range[1];
    const trailing = text.slice(value.range[1], lineEnd);
    const [first, ...rest] = blockText({ [key]: [item] }, column, style)
      .slice(column)
      .split(style.newline);
    const keyLine = `${first}${trailing.trim() === '' ? '' : trailing}`;
    return replace(keyStart, lineEnd, [keyLine, ...rest].join(style.newline).replace(/\r?\n$/, ''));
  }
  return refuse(`"${key}" is neither a list nor empty`);
}

/** Adds `key: value` as the last pair of `map`. */
function addPair(text: string, map: YAMLMap, key: string, value: unknown, style: Style): TextResult {
  const last = map.items[map.items.length - 1];
  if (last === undefined || map.range == null) return refuse('the issue mapping is empty');
  if (map.flow) {
    const end = nodeEnd(last.value) ?? nodeEnd(last.key);
    if (end === undefined) return refuse('the issue mapping has no positions');
    return replace(
      end,
      end,
      `, ${flowText({ [key]: value }, style)
        .slice(1, -1)
        .trim()}`,
    );
  }
  const firstKey = map.items[0]?.key;
  const keyStart = firstKey === undefined ? undefined : nodeStart(firstKey);
  const column = keyStart === undefined ? null : columnOf(text, keyStart, false);
  const at = map.range[1];
  if (column === null || !atLineStart(text, at)) return refuse('the issue mapping is laid out unusually');
  return replace(at, at, lineBreakFor(text, at, style) + blockText({ [key]: value }, column, style));
}

function replace(start: number, end: number, insert: string): TextResult {
  return { ok: true, splice: { start, end, insert } };
}

function nodeStart(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] | null } | null)?.range?.[0];
}

function nodeEnd(node: unknown): number | undefined {
  return (node as { range?: [number, number, number] | null } | null)?.range?.[1];
}

/** Where a block ends: at the start of a line, or at the end of a file without a final newline. */
function atLineStart(text: string, offset: number): boolean {
  return offset === 0 || offset === text.length || text[offset - 1] === '\n';
}

/** A newline to insert first when the block ends the file without one. */
function lineBreakFor(text: string, offset: number, style: Style): string {
  return offset > 0 && text[offset - 1] !== '\n' ? style.newline : '';
}

/**
 * The column of `offset` when only spaces (and `- ` markers of enclosing list items) precede
 * it on its line; with `dash`, `offset` must be a list item's `-` preceded by spaces alone.
 * Null for any other layout (tabs, `? ` keys, a node after other content).
 */
function columnOf(text: string, offset: number, dash: boolean): number | null {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const prefix = text.slice(lineStart, offset);
  if (dash) return text[offset] === '-' && /^ *$/.test(prefix) ? prefix.length : null;
  return /^ *(?:- +)*$/.test(prefix) ? prefix.length : null;
}

/** Block YAML for `value`, every line indented by `column` spaces, ending in a newline. */
function blockText(value: unknown, column: number, style: Style): string {
  const rendered = stringify(value, { lineWidth: 0, indentSeq: style.indentSeq });
  const pad = ' '.repeat(column);
  const lines = rendered.replace(/\n$/, '').split('\n');
  return lines.map((line) => (line === '' ? '' : pad + line)).join(style.newline) + style.newline;
}

/** Flow YAML for `value` on one line. */
function flowText(value: unknown, style: Style): string {
  return stringify(value, {
    lineWidth: 0,
    collectionStyle: 'flow',
    flowCollectionPadding: style.flowCollectionPadding,
  }).trim();
}

/** `state` written in the quoting its old value used; null when that value is a block scalar or anchored. */
function scalarText(state: string, old: Scalar): string | null {
  if (old.anchor !== undefined) return null;
  switch (old.type) {
    case 'QUOTE_SINGLE':
      return /^[^\p{Cc}]*$/u.test(state) ? `'${state.replaceAll("'", "''")}'` : JSON.stringify(state);
    case 'PLAIN':
      return isPlainSafe(state) ? state : JSON.stringify(state);
    case 'QUOTE_DOUBLE':
      return JSON.stringify(state);
    default:
      return null;
  }
}

/** Whether `value` reads back as itself unquoted, in block and flow context alike. */
function isPlainSafe(value: string): boolean {
  if (!/^[\p{L}\p{N}][\p{L}\p{N} _./-]*$/u.test(value) || value.endsWith(' ')) return false;
  try {
    return parse(value) === value;
  } catch {
    return false;
  }
}

/** Whether the file indents a list under its key (`key:\n  - a`, yaml's default) or not (`key:\n- a`); the majority wins. */
function indentsSequences(text: string): boolean {
  const flush = text.match(/^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1- /gm)?.length ?? 0;
  const indented = text.match(/^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1 +- /gm)?.length ?? 0;
  return indented >= flush;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
