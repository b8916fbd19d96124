/**
 * Pull requests as the API returns them, read into the forge's `PullRequestRef`. GitHub keeps
 * a merged pull request `closed` with a merge time, and leaves `mergeable` out of listings and
 * null while it computes it in the background; both are easy to misread as "closed" and "not
 * mergeable". Pure: the forge does the I/O.
 */
import type { PullRequestRef } from '../../domain/forge.js';
import { payloadError } from './errors.js';

/** A pull request as read, before the caller says whether it opened it. */
export type RawPull = Omit<PullRequestRef, 'opened'> & {
  title: string;
  body: string;
  /** Whether the answer carried `mergeable` at all (single reads do, listings do not). */
  mergeableKnown: boolean;
};

/** Reads one pull request object. */
export function readPull(data: unknown, what: string): RawPull {
  const pull = data as Record<string, unknown> | null;
  const head = pull?.head as { sha?: unknown } | null | undefined;
  if (typeof pull?.number !== 'number' || typeof head?.sha !== 'string') {
    throw payloadError(what, 'a pull request has no number or head');
  }
  const merged = pull.merged === true || (typeof pull.merged_at === 'string' && pull.merged_at !== '');
  return {
    number: pull.number,
    url: typeof pull.html_url === 'string' ? pull.html_url : '',
    headSha: head.sha,
    state: merged ? 'merged' : pull.state === 'open' ? 'open' : 'closed',
    mergeable: typeof pull.mergeable === 'boolean' ? pull.mergeable : null,
    mergeableKnown: 'mergeable' in pull,
    title: typeof pull.title === 'string' ? pull.title : '',
    body: typeof pull.body === 'string' ? pull.body : '',
  };
}

/** The ref a caller sees. */
export function toRef(pull: RawPull, opened: boolean): PullRequestRef {
  return {
    number: pull.number,
    url: pull.url,
    headSha: pull.headSha,
    state: pull.state,
    mergeable: pull.mergeable,
    opened,
  };
}

/** True for GitHub's refusal of a second open pull request for the same head (a lost race). */
export function isDuplicatePull(error: unknown): boolean {
  const failure = error as { status?: unknown; response?: { data?: unknown } } | null;
  if (failure?.status !== 422) return false;
  const data = failure.response?.data as { message?: unknown; errors?: unknown } | undefined;
  const texts = [data?.message, ...(Array.isArray(data?.errors) ? data.errors : [])].map((e) =>
    typeof e === 'string' ? e : String((e as { message?: unknown } | null)?.message ?? ''),
  );
  return texts.some((text) => /pull request already exists/i.test(text));
}

/** GitHub's own explanation in a failed answer ("Head branch was modified…"), or "". */
export function apiMessage(error: unknown): string {
  const data = (error as { response?: { data?: unknown } } | null)?.response?.data;
  const message = (data as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : '';
}
