/**
 * The prompts of the self-review loop: a review turn, on the same session as the work, that
 * judges the diff and the verification results and writes its verdict to a file; and a fix turn
 * that lists what the review found. They are built-in text, not the workflow's template: the
 * template describes the task, and the loop's instructions must be exact (the file name and its
 * shape) whatever the template says.
 */

/** One verification command's outcome, as the review turn sees it. */
export interface VerificationOutcome {
  command: string;
  /** null when it was killed or could not start. */
  exitCode: number | null;
  timedOut: boolean;
  /** Its output, already capped by the runner. */
  output: string;
}

export interface ReviewPromptInput {
  iteration: number;
  maxIterations: number;
  title: string;
  description: string;
  /** null when git could not produce one. */
  diff: { text: string; bytes: number; truncated: boolean } | null;
  verification: VerificationOutcome[];
  /** Where the verdict goes, relative to the workspace. */
  verdictPath: string;
  /** What the previous iteration's review asked for; null on the first. */
  previousNote: string | null;
}

/** Output of one command beyond this is cut in the prompt (the head and the tail are kept). */
const OUTPUT_CHARS_IN_PROMPT = 4_000;

/** The review turn's prompt. */
export function reviewPrompt(input: ReviewPromptInput): string {
  const lines = [
    `Self-review, iteration ${input.iteration} of ${input.maxIterations}. Review the change you made for this issue as a strict reviewer would, before anyone else sees it.`,
    '',
    `Issue: ${input.title}`,
  ];
  if (input.description.trim() !== '') lines.push('', input.description.trim());
  lines.push('', '## The change');
  if (input.diff === null) lines.push('[Diff unavailable: read the files you changed.]');
  else {
    lines.push('```diff', input.diff.text, '```');
    if (input.diff.truncated)
      lines.push(
        `[The diff is ${input.diff.bytes} bytes; only its beginning is shown. Read the rest in the files.]`,
      );
  }
  lines.push('', '## Verification');
  if (input.verification.length === 0) lines.push('No verification commands are configured.');
  for (const v of input.verification) {
    const result = v.timedOut ? 'timed out' : v.exitCode === null ? 'did not finish' : `exit ${v.exitCode}`;
    lines.push(`- \`${v.command}\`: ${result}`);
    if (v.exitCode !== 0 && v.output.trim() !== '') lines.push('```', clipMiddle(v.output.trim()), '```');
  }
  if (input.previousNote !== null) lines.push('', '## The previous review asked for', input.previousNote);
  lines.push(
    '',
    '## Your verdict',
    `Do not change any file in this turn. Write your verdict as JSON to ${input.verdictPath}:`,
    '{"verdict": "pass" or "iterate", "summary": "one paragraph", "issues": [{"file": "path", "line": 1, "end_line": 1, "severity": "high|medium|low", "message": "what is wrong and why"}]}',
    'Say "pass" only if the change does what the issue asks, the verification passed and you would merge it as it is.',
  );
  return lines.join('\n');
}

/** The fix turn's prompt, from the issues the review listed (or why its verdict could not be read). */
export function fixPrompt(found: { summary: string; issues: string[] } | { unreadable: string }): string {
  if ('unreadable' in found)
    return [
      'Your review verdict could not be read, so the change counts as not yet passing:',
      found.unreadable,
      'Check the change again, fix what needs fixing, and commit.',
    ].join('\n');
  const lines = ['Your review found the change not ready. Fix these, then commit:'];
  if (found.summary !== '') lines.push('', found.summary);
  lines.push('', ...found.issues.map((issue, i) => `${i + 1}. ${issue}`));
  return lines.join('\n');
}

function clipMiddle(text: string): string {
  if (text.length <= OUTPUT_CHARS_IN_PROMPT) return text;
  const half = Math.floor(OUTPUT_CHARS_IN_PROMPT / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters left out …]\n${text.slice(-half)}`;
}
