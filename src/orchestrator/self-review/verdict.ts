/**
 * The verdict a review turn writes to `.orchestrator/review_verdict.json`:
 * `{ "verdict": "pass" | "iterate", "summary": "…", "issues": [{ "file", "line", "end_line",
 * "severity", "message" }] }`. An agent writes it, so reading is lenient where meaning is clear
 * (the verdict's case, a missing summary, an issue without a line) and strict where it is not
 * (no verdict, another word): a verdict that cannot be read counts as `iterate`, with the reason
 * handed to the fix turn, so a broken file never passes a review.
 */

export type VerdictWord = 'pass' | 'iterate';

export interface ReviewIssue {
  file: string | null;
  line: number | null;
  endLine: number | null;
  severity: string | null;
  message: string;
}

export interface ReviewVerdict {
  verdict: VerdictWord;
  summary: string;
  issues: ReviewIssue[];
}

/** At most this many issues are kept from one verdict (the fix prompt lists them all). */
export const MAX_REVIEW_ISSUES = 50;
const MAX_TEXT_CHARS = 2_000;

export type ParsedVerdict = { ok: true; verdict: ReviewVerdict } | { ok: false; reason: string };

/** Reads a parsed `review_verdict.json` value. */
export function parseVerdict(value: unknown): ParsedVerdict {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'the verdict file is not a JSON object' };
  const v = value as Record<string, unknown>;
  const word = typeof v.verdict === 'string' ? v.verdict.trim().toLowerCase() : '';
  if (word !== 'pass' && word !== 'iterate')
    return {
      ok: false,
      reason: `"verdict" must be "pass" or "iterate", not ${JSON.stringify(v.verdict ?? null)}`,
    };
  const issues = Array.isArray(v.issues) ? v.issues.flatMap(readIssue).slice(0, MAX_REVIEW_ISSUES) : [];
  return { ok: true, verdict: { verdict: word, summary: text(v.summary) ?? '', issues } };
}

function readIssue(value: unknown): ReviewIssue[] {
  if (typeof value === 'string') return value.trim() === '' ? [] : [{ ...NO_PLACE, message: clip(value) }];
  if (typeof value !== 'object' || value === null) return [];
  const v = value as Record<string, unknown>;
  const message = text(v.message) ?? text(v.description);
  if (message === null) return [];
  const line = positive(v.line);
  return [
    {
      file: text(v.file) ?? text(v.path),
      line,
      endLine: positive(v.end_line) ?? positive(v.endLine) ?? line,
      severity: text(v.severity)?.toLowerCase() ?? null,
      message,
    },
  ];
}

const NO_PLACE = { file: null, line: null, endLine: null, severity: null };

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? clip(value.trim()) : null;
}

function clip(value: string): string {
  return value.length > MAX_TEXT_CHARS ? `${value.slice(0, MAX_TEXT_CHARS)}…` : value;
}

function positive(value: unknown): number | null {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
}
