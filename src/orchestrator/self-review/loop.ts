/**
 * The self-review loop, run after a session's work turns succeed and before the handoff: each
 * iteration shows the agent its own diff and the verification results in a review turn on the
 * same session, reads the verdict it wrote, and on `iterate` runs a fix turn with the issues it
 * listed. It ends on `pass`, at `max_iterations` (cap reached), when a turn fails (error: the
 * run itself still ends normally), or when the agent raises a status signal (stopped). Every
 * effect (git, commands, turns, files) is a dependency, so the loop is tested on its own.
 */
import type { ReviewPromptInput, VerificationOutcome } from '../../prompt/self-review.js';
import { fixPrompt, reviewPrompt } from '../../prompt/self-review.js';
import { parseVerdict, type ReviewIssue, type VerdictWord } from './verdict.js';

export interface SelfReviewSettings {
  maxIterations: number;
  title: string;
  description: string;
  /** Where the agent writes its verdict, relative to the workspace. */
  verdictPath: string;
}

/** What a read of the verdict file found. */
export type VerdictFile =
  | { kind: 'absent' }
  | { kind: 'read'; value: unknown }
  | { kind: 'ignored'; reason: string };

export interface SelfReviewDeps {
  /** The change under review; null when git cannot produce it. */
  diff(): Promise<ReviewPromptInput['diff']>;
  /** Runs every verification command, in order. */
  verify(): Promise<(VerificationOutcome & { durationMs: number })[]>;
  /** Removes an earlier verdict so a stale one is never read as this iteration's. */
  clearVerdict(): void;
  readVerdict(): VerdictFile;
  /** One turn on the session; `ok: false` ends the loop with its detail. */
  runTurn(prompt: string, purpose: 'review' | 'fix'): Promise<{ ok: true } | { ok: false; detail: string }>;
  /** Whether the agent asked to stop (a status signal) after the last turn. */
  stopRequested(): boolean;
}

export interface ReviewIteration {
  iteration: number;
  diffBytes: number | null;
  diffTruncated: boolean;
  verification: { command: string; exitCode: number | null; timedOut: boolean; durationMs: number }[];
  verdict: VerdictWord | null;
  /** Why the verdict could not be read; null when it was. */
  verdictError: string | null;
  summary: string;
  issues: ReviewIssue[];
}

export type SelfReviewStatus = 'passed' | 'cap_reached' | 'error' | 'stopped';

export interface SelfReviewOutcome {
  status: SelfReviewStatus;
  iterations: ReviewIteration[];
  finalVerdict: VerdictWord | 'none';
  /** Review and fix turns run. */
  turns: number;
  /** What ended it early (a failed turn, a stop signal). */
  detail: string | null;
}

/** Runs the loop to its end. */
export async function runSelfReview(
  settings: SelfReviewSettings,
  deps: SelfReviewDeps,
): Promise<SelfReviewOutcome> {
  const iterations: ReviewIteration[] = [];
  let turns = 0;
  let previousNote: string | null = null;
  const end = (status: SelfReviewStatus, detail: string | null = null): SelfReviewOutcome => ({
    status,
    iterations,
    finalVerdict: iterations.at(-1)?.verdict ?? 'none',
    turns,
    detail,
  });

  for (let iteration = 1; iteration <= settings.maxIterations; iteration++) {
    const diff = await deps.diff();
    const verification = await deps.verify();
    deps.clearVerdict();
    const prompt = reviewPrompt({
      iteration,
      maxIterations: settings.maxIterations,
      title: settings.title,
      description: settings.description,
      diff,
      verification,
      verdictPath: settings.verdictPath,
      previousNote,
    });
    const reviewed = await deps.runTurn(prompt, 'review');
    turns += 1;
    if (!reviewed.ok) return end('error', `review turn ${iteration}: ${reviewed.detail}`);
    if (deps.stopRequested())
      return end('stopped', `the agent raised a status signal in review turn ${iteration}`);

    const file = deps.readVerdict();
    const parsed =
      file.kind === 'read'
        ? parseVerdict(file.value)
        : {
            ok: false as const,
            reason:
              file.kind === 'absent' ? `no verdict was written to ${settings.verdictPath}` : file.reason,
          };
    iterations.push({
      iteration,
      diffBytes: diff?.bytes ?? null,
      diffTruncated: diff?.truncated ?? false,
      verification: verification.map(({ command, exitCode, timedOut, durationMs }) => ({
        command,
        exitCode,
        timedOut,
        durationMs,
      })),
      verdict: parsed.ok ? parsed.verdict.verdict : null,
      verdictError: parsed.ok ? null : parsed.reason,
      summary: parsed.ok ? parsed.verdict.summary : '',
      issues: parsed.ok ? parsed.verdict.issues : [],
    });
    if (parsed.ok && parsed.verdict.verdict === 'pass') return end('passed');
    if (iteration === settings.maxIterations) return end('cap_reached');

    const issues = parsed.ok ? parsed.verdict.issues.map(describeIssue) : [];
    const fixed = await deps.runTurn(
      fixPrompt(parsed.ok ? { summary: parsed.verdict.summary, issues } : { unreadable: parsed.reason }),
      'fix',
    );
    turns += 1;
    if (!fixed.ok) return end('error', `fix turn ${iteration}: ${fixed.detail}`);
    if (deps.stopRequested())
      return end('stopped', `the agent raised a status signal in fix turn ${iteration}`);
    previousNote = parsed.ok
      ? [parsed.verdict.summary, ...issues].filter((s) => s !== '').join('\n')
      : parsed.reason;
  }
  return end('cap_reached');
}

function describeIssue(issue: ReviewIssue): string {
  const place =
    issue.file === null
      ? ''
      : issue.line === null
        ? `${issue.file}: `
        : issue.endLine !== null && issue.endLine !== issue.line
          ? `${issue.file}:${issue.line}-${issue.endLine}: `
          : `${issue.file}:${issue.line}: `;
  return `${place}${issue.severity === null ? '' : `[${issue.severity}] `}${issue.message}`;
}

/** The loop's outcome as stored with the run and served by the API (snake_case, plain JSON). */
export function reviewRecord(outcome: SelfReviewOutcome): Record<string, unknown> {
  return {
    status: outcome.status,
    final_verdict: outcome.finalVerdict,
    turns: outcome.turns,
    detail: outcome.detail,
    iterations: outcome.iterations.map((it) => ({
      iteration: it.iteration,
      diff_bytes: it.diffBytes,
      diff_truncated: it.diffTruncated,
      verification: it.verification.map((v) => ({
        command: v.command,
        exit_code: v.exitCode,
        timed_out: v.timedOut,
        duration_ms: v.durationMs,
      })),
      verdict: it.verdict,
      verdict_error: it.verdictError,
      summary: it.summary,
      issues: it.issues.map((i) => ({
        file: i.file,
        line: i.line,
        end_line: i.endLine,
        severity: i.severity,
        message: i.message,
      })),
    })),
  };
}
