import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrackerError } from '../../../src/domain/errors.js';
import { formatForPath, type IssuesFileErrorCode, parseIssuesText } from '../../../src/tracker/file/parse.js';

const CORPUS = join(import.meta.dirname, '../../../testdata/tracker/malformed');

/** Each malformed file, the line an operator must be sent to, and the error code. */
const EXPECTED: Record<string, { line: number; code: IssuesFileErrorCode }> = {
  'json-comment.json': { line: 2, code: 'file.syntax' },
  'json-duplicate-id.json': { line: 4, code: 'file.issue.duplicate' },
  'json-empty.json': { line: 1, code: 'file.syntax' },
  'json-issue-not-an-object.json': { line: 4, code: 'file.issue.invalid' },
  'json-labels-not-a-list.json': { line: 4, code: 'file.issue.invalid' },
  'json-missing-comma.json': { line: 4, code: 'file.syntax' },
  'json-missing-title.json': { line: 3, code: 'file.issue.invalid' },
  'json-not-a-list.json': { line: 3, code: 'file.shape' },
  'json-object-without-issues.json': { line: 1, code: 'file.shape' },
  'json-trailing-comma.json': { line: 6, code: 'file.syntax' },
  'json-truncated.json': { line: 9, code: 'file.syntax' },
  'json-unterminated-string.json': { line: 5, code: 'file.syntax' },
  'txt-broken-yaml.txt': { line: 4, code: 'file.syntax' },
  'txt-empty-state.txt': { line: 3, code: 'file.issue.invalid' },
  'yaml-bad-indent.yaml': { line: 3, code: 'file.syntax' },
  'yaml-comment-body-not-text.yaml': { line: 2, code: 'file.issue.invalid' },
  'yaml-duplicate-identifier.yaml': { line: 6, code: 'file.issue.duplicate' },
  'yaml-duplicate-key.yml': { line: 5, code: 'file.syntax' },
  'yaml-issues-not-a-list.yaml': { line: 1, code: 'file.shape' },
  'yaml-missing-state.yaml': { line: 6, code: 'file.issue.invalid' },
  'yaml-numeric-id.yaml': { line: 5, code: 'file.issue.invalid' },
  'yaml-two-documents.yaml': { line: 5, code: 'file.syntax' },
  'yaml-unclosed-flow.yaml': { line: 6, code: 'file.syntax' },
};

describe('malformed issues files', () => {
  it('every file in the corpus has an expected line (the table and the corpus cannot drift)', () => {
    expect(readdirSync(CORPUS).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s is a payload error naming the file and line', (name, expected) => {
    const path = join(CORPUS, name);
    const result = parseIssuesText(readFileSync(path, 'utf8'), path, formatForPath(path));
    if (result.ok) throw new Error(`${name} parsed, but it is malformed`);
    expect(result.error).toBeInstanceOf(TrackerError);
    expect(result.error.kind).toBe('tracker_payload_error');
    expect({ line: result.error.line, code: result.error.code }).toEqual(expected);
    expect(result.error.message).toContain(`${path}:${expected.line}:`);
  });
});
