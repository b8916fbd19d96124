/**
 * Edits of a JSON issue as byte splices: a new state replaces the bytes of the `state`
 * value; a comment or label is inserted after the last item of its list, or as a new
 * member after the issue's last one. New text copies the layout around it (the gap before
 * the neighbouring item, the spacing after a colon, the indent unit), so a hand-formatted
 * file stays formatted its way and no other byte of it changes.
 */
import { decodeUtf8, type ExpandRule, isJsonSpace, type JsonNode, memberOf, scanJson } from './json-scan.js';
import { assertNever, type IssueEdit, refuse, type SpliceResult } from './splice.js';

/** The issue object and the values of its members; list items stay unexpanded. */
const ISSUE_AND_MEMBERS: ExpandRule = (depth) => depth < 2;

/** How new text is laid out, copied from its neighbours. */
interface Layout {
  /** Each item or member on its own line (else all on one line). */
  multiline: boolean;
  newline: string;
  /** The indent of the line the new value starts on. */
  indent: string;
  /** One level of indentation. */
  unit: string;
  /** What follows a key: `": "`, `":"`, … */
  colon: string;
  /** What follows a comma before the new item: the gap before its neighbour (`"\n    "`, `" "`, `""`). */
  gap: string;
}

/** The splice that applies `edit` to the issue at bytes [start, end) of `bytes`. */
export function jsonSplice(bytes: Uint8Array, start: number, end: number, edit: IssueEdit): SpliceResult {
  const scan = scanJson(bytes.subarray(start, end), { expand: ISSUE_AND_MEMBERS });
  if (!scan.ok || scan.root.kind !== 'object') return refuse('the issue is not a JSON object');
  const issue = scan.root;
  const last = issue.members[issue.members.length - 1];
  if (last === undefined) return refuse('the issue has no members');
  const text = (from: number, to: number) => decodeUtf8(bytes.subarray(start + from, start + to));
  const colon = text(last.keyEnd, last.value.start);
  const unit = indentUnit(bytes, start, start + last.keyStart);
  const layoutAt = (offset: number): Layout => layoutOf(gapBefore(bytes, start + offset), unit, colon);

  const appendTo = (key: string, item: unknown): SpliceResult => {
    const member = memberOf(issue, key);
    if (member === undefined) {
      const layout = layoutAt(last.keyStart);
      const insert = `,${layout.gap}${JSON.stringify(key)}${colon}${render([item], layout, layout.indent)}`;
      return splice(start + last.value.end, start + last.value.end, insert);
    }
    const value = member.value;
    const lastItem = value.kind === 'array' ? value.items[value.items.length - 1] : undefined;
    if (lastItem !== undefined) {
      const layout = layoutAt(lastItem.start);
      // `["a"]` says nothing about the space after a comma; follow the space after a colon.
      if (layout.gap === '' && value.kind === 'array' && value.items.length === 1)
        layout.gap = colon.endsWith(' ') ? ' ' : '';
      return splice(
        start + lastItem.end,
        start + lastItem.end,
        `,${layout.gap}${render(item, layout, layout.indent)}`,
      );
    }
    if (value.kind === 'array' || isNull(bytes, start, value)) {
      const layout = layoutAt(member.keyStart);
      return splice(start + value.start, start + value.end, render([item], layout, layout.indent));
    }
    return refuse(`"${key}" is neither a list nor null`);
  };

  switch (edit.type) {
    case 'state': {
      const member = memberOf(issue, 'state');
      if (member === undefined) return refuse('the issue has no "state" member');
      return splice(start + member.value.start, start + member.value.end, JSON.stringify(edit.state));
    }
    case 'comment':
      return appendTo('comments', edit.comment);
    case 'label':
      return appendTo('labels', edit.label);
    default:
      return assertNever(edit);
  }
}

function splice(start: number, end: number, insert: string): SpliceResult {
  return { ok: true, splice: { start, end, insert } };
}

function isNull(bytes: Uint8Array, base: number, node: JsonNode): boolean {
  return node.end - node.start === 4 && bytes[base + node.start] === 0x6e;
}

/** The whitespace right before `offset` (back to the previous `,`, `[`, `{` or `:`). */
function gapBefore(bytes: Uint8Array, offset: number): string {
  let from = offset;
  while (from > 0 && isJsonSpace(bytes[from - 1])) from--;
  return decodeUtf8(bytes.subarray(from, offset));
}

function layoutOf(gap: string, unit: string, colon: string): Layout {
  const multiline = gap.includes('\n');
  return {
    multiline,
    newline: gap.includes('\r\n') ? '\r\n' : '\n',
    indent: multiline ? gap.slice(gap.lastIndexOf('\n') + 1) : '',
    unit,
    colon,
    gap,
  };
}

/**
 * One level of indentation: the indent of the issue's members less the indent of the line
 * the issue opens on; two spaces when that says nothing (an issue on one line).
 */
function indentUnit(bytes: Uint8Array, issueStart: number, memberStart: number): string {
  const member = lineIndent(bytes, memberStart);
  const issue = lineIndent(bytes, issueStart);
  if (member.length > issue.length && member.startsWith(issue)) return member.slice(issue.length);
  return '  ';
}

/** The leading whitespace of the line holding `offset`. */
function lineIndent(bytes: Uint8Array, offset: number): string {
  let lineStart = offset;
  while (lineStart > 0 && bytes[lineStart - 1] !== 0x0a) lineStart--;
  let end = lineStart;
  while (end < offset && (bytes[end] === 0x20 || bytes[end] === 0x09)) end++;
  return decodeUtf8(bytes.subarray(lineStart, end));
}

/** JSON text of `value` in `layout`, its first line continuing one that is indented by `indent`. */
function render(value: unknown, layout: Layout, indent: string): string {
  if (Array.isArray(value)) {
    return wrap('[', ']', value, (item, inner) => render(item, layout, inner), layout, indent);
  }
  if (typeof value === 'object' && value !== null) {
    return wrap(
      '{',
      '}',
      Object.entries(value),
      ([key, item], inner) => `${JSON.stringify(key)}${layout.colon}${render(item, layout, inner)}`,
      layout,
      indent,
    );
  }
  return JSON.stringify(value);
}

function wrap<T>(
  open: string,
  close: string,
  items: readonly T[],
  each: (item: T, indent: string) => string,
  layout: Layout,
  indent: string,
): string {
  if (items.length === 0) return `${open}${close}`;
  if (!layout.multiline)
    return `${open}${items.map((item) => each(item, indent)).join(`,${layout.gap}`)}${close}`;
  const inner = indent + layout.unit;
  const lines = items.map((item) => `${layout.newline}${inner}${each(item, inner)}`);
  return `${open}${lines.join(',')}${layout.newline}${indent}${close}`;
}
