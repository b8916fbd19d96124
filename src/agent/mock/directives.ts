/**
 * The mock runtime's directive language: lines of its prompt that start with `!`.
 * Kept apart from the runtime so tests and the adapter can read directives
 * without starting the runtime.
 */

export interface Directive {
  name: string;
  args: string[];
  /** Everything after the name, trimmed. */
  rest: string;
}

/** Parses directive lines out of a prompt; non-directive lines are ignored. */
export function parseDirectives(prompt: string): Directive[] {
  const out: Directive[] = [];
  for (const raw of prompt.split(/\r?\n/)) {
    const line = raw.trim();
    const m = /^!([a-z]+)\b\s*(.*)$/.exec(line);
    if (m === null) continue;
    const rest = (m[2] ?? '').trim();
    out.push({ name: m[1] as string, args: rest === '' ? [] : rest.split(/\s+/), rest });
  }
  return out;
}

/** What a prompt is for, as the mock runtime tells it: the self-review loop's two turns, or work. */
export type PromptPurpose = 'review' | 'fix' | 'work';

/**
 * The first lines the self-review prompts open with: they must match `reviewPrompt` and
 * `fixPrompt` in src/prompt/self-review.ts (a test holds them together). Copied, not imported:
 * the runtime starts as its own process on Node built-ins only.
 */
export const REVIEW_PROMPT_OPENING = /^Self-review, iteration \d+ of \d+\./;
export const FIX_PROMPT_OPENINGS = [
  'Your review found the change not ready.',
  'Your review verdict could not be read',
] as const;

/**
 * A prompt's purpose, from its first non-blank line only: the rest of a review or fix prompt
 * quotes text the work controls (the issue, the diff, the review's own summary), which must not
 * make a prompt look like another kind.
 */
export function promptPurpose(prompt: string): PromptPurpose {
  const first =
    prompt
      .split(/\r?\n/)
      .find((line) => line.trim() !== '')
      ?.trim() ?? '';
  if (REVIEW_PROMPT_OPENING.test(first)) return 'review';
  if (FIX_PROMPT_OPENINGS.some((opening) => first.startsWith(opening))) return 'fix';
  return 'work';
}

/** The verdict file a review prompt names (its last `… Write your verdict as JSON to <path>:`), or null. */
export function verdictPathIn(prompt: string): string | null {
  const found = [...prompt.matchAll(/Write your verdict as JSON to (\S+):$/gm)];
  return found.at(-1)?.[1] ?? null;
}
