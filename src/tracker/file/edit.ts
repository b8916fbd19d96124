/**
 * Applies one write (new state, new comment, new label) to a parsed issues file. Operators
 * own this file, so a write changes the edited issue's bytes and nothing else: the edit is
 * a splice (see `splice.ts`), and before anything is written the result is read back and
 * must say exactly what was intended, for the edited issue and, in YAML, for every other
 * one. An edit that cannot meet that is refused as `file.unpreservable`, never approximated.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Issue } from '../../domain/issue.js';
import { jsonSplice } from './edit-json.js';
import { yamlSplice } from './edit-yaml.js';
import { countLines, decodeUtf8, scanJson } from './json-scan.js';
import { normaliseIssue, resolveBlockers } from './normalise.js';
import { IssuesFileError, type ParsedIssuesFile, parseIssues } from './parse.js';
import { assertNever, type IssueEdit, spliceBytes } from './splice.js';

export type { IssueEdit, StoredComment } from './splice.js';

/** The file after the edit (bytes to write, issues as they will read back), or why it was refused. */
export type EditResult = { ok: true; parsed: ParsedIssuesFile } | { ok: false; error: IssuesFileError };

/** Applies `edit` to the issue at `index` (file order); `file` names the file in errors. */
export function applyEdit(
  parsed: ParsedIssuesFile,
  index: number,
  edit: IssueEdit,
  file: string,
): EditResult {
  const issue = parsed.normalised[index];
  if (issue === undefined) throw new Error(`no issue at index ${index}`);
  const expected = expectedAfter(issue, edit);
  const refuse = (reason: string): EditResult => ({
    ok: false,
    error: new IssuesFileError(
      'file.unpreservable',
      file,
      parsed.lines[index] ?? null,
      `refusing to write: ${reason}`,
    ),
  });
  return parsed.spans === null
    ? editYaml(parsed, index, edit, expected, file, refuse)
    : editJson(parsed, parsed.spans, index, edit, expected, refuse);
}

/** The issue as it must read back after `edit`. */
function expectedAfter(issue: Issue, edit: IssueEdit): Issue {
  switch (edit.type) {
    case 'state':
      return { ...issue, state: edit.state };
    case 'comment': {
      const { id, author, body, created_at: createdAt } = edit.comment;
      return { ...issue, comments: [...(issue.comments ?? []), { id, author, body, createdAt }] };
    }
    case 'label':
      return { ...issue, labels: [...issue.labels, edit.label] };
    default:
      return assertNever(edit);
  }
}

/** Splices the issue, re-reads that issue alone, and shifts the spans and lines after it. */
function editJson(
  parsed: ParsedIssuesFile,
  spans: Float64Array,
  index: number,
  edit: IssueEdit,
  expected: Issue,
  refuse: (reason: string) => EditResult,
): EditResult {
  const start = spans[2 * index] as number;
  const end = spans[2 * index + 1] as number;
  const result = jsonSplice(parsed.bytes, start, end, edit);
  if (!result.ok) return refuse(result.reason);
  const { splice } = result;
  const { bytes, inserted } = spliceBytes(parsed.bytes, splice);
  const shiftBytes = bytes.length - parsed.bytes.length;
  const slice = bytes.subarray(start, end + shiftBytes);
  const scan = scanJson(slice, { expand: () => false });
  if (!scan.ok || scan.root.end !== slice.length) return refuse('the edited issue would not be valid JSON');
  const reread = normaliseIssue(JSON.parse(decodeUtf8(slice)));
  if (!reread.ok || !isDeepStrictEqual(reread.issue, expected)) {
    return refuse('the edited issue would not read back as intended');
  }
  const shiftLines = countLines(inserted) - countLines(parsed.bytes.subarray(splice.start, splice.end));
  const nextSpans = spans.slice();
  nextSpans[2 * index + 1] = end + shiftBytes;
  for (let i = 2 * index + 2; i < nextSpans.length; i++) nextSpans[i] = (nextSpans[i] as number) + shiftBytes;
  const normalised = parsed.normalised.slice();
  normalised[index] = reread.issue;
  return {
    ok: true,
    parsed: {
      ...parsed,
      bytes,
      normalised,
      issues: resolveBlockers(normalised, parsed.byId, parsed.byIdentifier),
      lines:
        shiftLines === 0
          ? parsed.lines
          : parsed.lines.map((line, i) => (i > index ? line + shiftLines : line)),
      spans: nextSpans,
    },
  };
}

/** Splices the issue and re-reads the whole file: every other issue must read back unchanged. */
function editYaml(
  parsed: ParsedIssuesFile,
  index: number,
  edit: IssueEdit,
  expected: Issue,
  file: string,
  refuse: (reason: string) => EditResult,
): EditResult {
  const result = yamlSplice(parsed.bytes, index, edit);
  if (!result.ok) return refuse(result.reason);
  const { bytes } = spliceBytes(parsed.bytes, result.splice);
  const reread = parseIssues(bytes, file, 'yaml');
  if (!reread.ok) return refuse(`the edited file would not read back: ${reread.error.reason}`);
  const after = reread.value.normalised;
  if (after.length !== parsed.normalised.length) return refuse('the edit would change the number of issues');
  for (const [i, issue] of after.entries()) {
    const want = i === index ? expected : parsed.normalised[i];
    if (!isDeepStrictEqual(issue, want)) {
      return refuse(
        i === index
          ? 'the edited issue would not read back as intended'
          : `the edit would also change issue ${issue.identifier}`,
      );
    }
  }
  return { ok: true, parsed: reread.value };
}
