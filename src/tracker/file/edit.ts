/**
 * Applies one write (new state, new comment, new label) to a parsed issues file
 * and renders the new text. Operators own this file: fields the tracker does not
 * know, key order, and for YAML the comments and layout, must survive a write, so
 * the edit goes into the parsed source in place instead of re-serialising issues.
 */
import { isAlias, isMap, isSeq, type YAMLMap } from 'yaml';
import type { ParsedIssuesFile } from './parse.js';

/** A comment as stored in the file (snake_case, like every key the tracker writes). */
export interface StoredComment {
  id: string;
  author: string;
  body: string;
  created_at: string;
}

/** One change to one issue. */
export type IssueEdit =
  | { type: 'state'; state: string }
  | { type: 'comment'; comment: StoredComment }
  | { type: 'label'; label: string };

/** The new file text, or why the issue could not be edited. */
export type EditResult = { ok: true; text: string } | { ok: false; reason: string };

/** Applies `edit` to the issue at `index` (file order) and returns the whole new file text. */
export function applyEdit(parsed: ParsedIssuesFile, index: number, edit: IssueEdit): EditResult {
  const body = parsed.text.startsWith('\uFEFF') ? parsed.text.slice(1) : parsed.text;
  const rendered =
    parsed.source.format === 'json'
      ? editJson(parsed.source.root, parsed.source.list, index, edit, body)
      : editYaml(parsed, index, edit, body);
  if (!rendered.ok) return rendered;
  let text = rendered.text;
  if (body.includes('\r\n')) text = text.replace(/\r?\n/g, '\r\n');
  if (body !== parsed.text) text = `\uFEFF${text}`;
  return { ok: true, text };
}

function editJson(root: unknown, list: unknown[], index: number, edit: IssueEdit, body: string): EditResult {
  const issue = list[index];
  if (typeof issue !== 'object' || issue === null || Array.isArray(issue)) {
    return { ok: false, reason: `issue ${index + 1} is not an object` };
  }
  const record = issue as Record<string, unknown>;
  switch (edit.type) {
    case 'state':
      record.state = edit.state;
      break;
    case 'comment':
      appendTo(record, 'comments', edit.comment);
      break;
    case 'label':
      appendTo(record, 'labels', edit.label);
      break;
    default:
      return assertNever(edit);
  }
  return { ok: true, text: `${JSON.stringify(root, null, jsonIndent(body))}\n` };
}

function appendTo(record: Record<string, unknown>, key: string, item: unknown): void {
  const existing = record[key];
  if (Array.isArray(existing)) existing.push(item);
  else record[key] = [item];
}

/** The indentation the file already uses: its first indented line, 0 for a one-line file, else 2 spaces. */
function jsonIndent(body: string): string | number {
  const match = /\n([ \t]+)\S/.exec(body);
  if (match?.[1] !== undefined) return match[1];
  return body.trim().includes('\n') ? 2 : 0;
}

function editYaml(parsed: ParsedIssuesFile, index: number, edit: IssueEdit, body: string): EditResult {
  if (parsed.source.format !== 'yaml') return { ok: false, reason: 'not a YAML source' };
  const { doc, list } = parsed.source;
  const item = list.items[index];
  const node = isAlias(item) ? item.resolve(doc) : item;
  if (!isMap(node)) return { ok: false, reason: `issue ${index + 1} is not a mapping` };
  const map = node as YAMLMap;
  switch (edit.type) {
    case 'state':
      map.set('state', edit.state);
      break;
    case 'comment':
      appendToSeq(map, 'comments', edit.comment);
      break;
    case 'label':
      appendToSeq(map, 'labels', edit.label);
      break;
    default:
      return assertNever(edit);
  }
  const text = doc.toString({
    lineWidth: 0,
    flowCollectionPadding: /[[{] \S/.test(body),
    indentSeq: indentsSequences(body),
  });
  return { ok: true, text };

  function appendToSeq(target: YAMLMap, key: string, value: unknown): void {
    const existing = target.get(key, true);
    if (isSeq(existing)) existing.add(doc.createNode(value));
    else target.set(key, doc.createNode([value]));
  }
}

/** Whether the file indents a list under its key (`key:\n  - a`, yaml's default) or not (`key:\n- a`); the majority wins. */
function indentsSequences(body: string): boolean {
  const flush = body.match(/^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1- /gm)?.length ?? 0;
  const indented = body.match(/^( *)[^\s#-][^\n]*:[ \t]*\r?\n\1 +- /gm)?.length ?? 0;
  return indented >= flush;
}

function assertNever(value: never): never {
  throw new Error(`unhandled edit ${JSON.stringify(value)}`);
}
