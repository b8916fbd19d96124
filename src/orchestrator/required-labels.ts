/**
 * `tracker.required_labels`: an issue is worked only while it carries every one of them. The
 * comparison ignores case and surrounding blanks on both sides, and a blank configured label
 * matches nothing (so a typo stops all work instead of letting every issue through). Pure: the
 * eligibility check and reconciliation both ask it, so dispatch and the stop of a running
 * session follow the same rule.
 */

function normalise(label: string): string {
  return label.trim().toLowerCase();
}

/** The required labels `issueLabels` lacks, as configured (trimmed, lower case); [] when it has them all. */
export function missingLabels(issueLabels: readonly string[], required: readonly string[]): string[] {
  if (required.length === 0) return [];
  const carried = new Set(issueLabels.map(normalise).filter((label) => label !== ''));
  return required.map(normalise).filter((label) => label === '' || !carried.has(label));
}

/** The missing labels in words, for logs and the waiting list: `missing required labels: agent, "" (blank)`. */
export function missingLabelsText(missing: readonly string[]): string {
  const names = missing.map((label) => (label === '' ? '"" (blank)' : label));
  return `missing required label${missing.length === 1 ? '' : 's'}: ${names.join(', ')}`;
}
