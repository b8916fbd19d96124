/**
 * The words that hand a pull request to a person once fix turns stopped helping. Short and
 * plain: which reaction gave up, on which pull request and branch, what is still wrong, and
 * that nothing more happens on its own until it comes right.
 */
import type { FixReactionKind, ForgeReading, PullWatch } from './types.js';

/** The escalation comment for `kind`, from the reading that triggered it. */
export function escalationComment(
  kind: FixReactionKind,
  watch: Pick<PullWatch, 'branch' | 'base'>,
  reading: ForgeReading,
  attempts: number,
): string {
  const pr = `pull request #${reading.pull.number} (${reading.pull.url}), branch \`${watch.branch}\``;
  const tried = attempts === 0 ? 'with no fix turns allowed' : `after ${plural(attempts, 'fix turn')}`;
  switch (kind) {
    case 'ci_failure': {
      const failing = (reading.ci?.checks ?? []).filter((c) => c.state === 'failing');
      const lines = failing.map(
        (c) => `- ${c.name}${c.conclusion ? ` (${c.conclusion})` : ''}: ${c.detailsUrl ?? 'no details link'}`,
      );
      return [
        `Reaction ci_failure: CI is still failing on ${pr}, ${tried}.`,
        ...(lines.length > 0 ? ['Failing checks:', ...lines] : ['No failing check was named by the forge.']),
        'A person is needed; no more fix turns run for CI on this pull request until it passes.',
      ].join('\n');
    }
    case 'review_comments': {
      const items = reading.reviews?.changesRequested.length ?? 0;
      return [
        `Reaction review_comments: ${plural(items, 'review feedback item')} still ${items === 1 ? 'requests' : 'request'} changes on ${pr}, ${tried}.`,
        'A person is needed; no more fix turns run for this review until its requested changes are settled.',
      ].join('\n');
    }
    case 'merge_conflict':
      return [
        `Reaction merge_conflict: ${pr}, is not mergeable against \`${watch.base}\`, ${tried}.`,
        'A person is needed; no more fix turns run for the conflict until the pull request merges cleanly.',
      ].join('\n');
    default:
      return assertNever(kind);
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function assertNever(value: never): never {
  throw new Error(`unexpected reaction kind ${String(value)}`);
}
