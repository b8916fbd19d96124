/**
 * CI as GitHub's check runs report it, reduced to passing, failing or pending. The trap is
 * treating "not passed" as "failed": a run still queued, a conclusion GitHub marks stale, or
 * a word this code has never seen all mean "ask again later", never "the agent broke it".
 * Only conclusions that say the code or the job is at fault count as failing; one of them
 * makes the whole commit fail, and only a commit whose every run finished without one
 * passes. Pure: the forge does the I/O.
 */
import type { CheckState, CheckSummary, CiStatus } from '../../domain/forge.js';
import { payloadError } from './errors.js';

/** Conclusions of a finished run that let the commit pass. */
const PASSING = new Set(['success', 'neutral', 'skipped']);
/** Conclusions that fail it (`action_required` waits on a person, so the change cannot go on by itself). */
const FAILING = new Set(['failure', 'timed_out', 'cancelled', 'action_required']);

/** The slug of the app whose check runs are GitHub Actions jobs (their ids are job ids). */
export const ACTIONS_APP = 'github-actions';

/** One check run as read from the API. */
export interface RawCheckRun {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  detailsUrl: string | null;
  appSlug: string | null;
}

/** The state of one run: pending until it completed with a conclusion we know. */
export function runState(status: string, conclusion: string | null): CheckState {
  if (status !== 'completed' || conclusion === null) return 'pending';
  if (FAILING.has(conclusion)) return 'failing';
  if (PASSING.has(conclusion)) return 'passing';
  return 'pending';
}

/** The commit's state: no runs or any unfinished → pending, any failing → failing. */
export function aggregateState(states: readonly CheckState[]): CheckState {
  if (states.length === 0) return 'pending';
  if (states.includes('failing')) return 'failing';
  return states.every((s) => s === 'passing') ? 'passing' : 'pending';
}

/** The summary of a list of runs, without the log excerpt. */
export function summarise(runs: readonly RawCheckRun[]): Omit<CiStatus, 'logExcerpt'> {
  const checks: CheckSummary[] = runs.map((run) => ({
    name: run.name,
    state: runState(run.status, run.conclusion),
    conclusion: run.status === 'completed' ? run.conclusion : null,
    detailsUrl: run.detailsUrl,
  }));
  return { state: aggregateState(checks.map((c) => c.state)), checks };
}

/** The first failing run whose log GitHub Actions can give, or undefined. */
export function firstFailingActionsRun(runs: readonly RawCheckRun[]): RawCheckRun | undefined {
  return runs.find(
    (run) => run.appSlug === ACTIONS_APP && runState(run.status, run.conclusion) === 'failing',
  );
}

/** The runs of one page of `GET …/commits/{ref}/check-runs`. */
export function readCheckRuns(data: unknown, what: string): RawCheckRun[] {
  const runs = (data as { check_runs?: unknown } | null)?.check_runs;
  if (!Array.isArray(runs)) throw payloadError(what, 'check runs are missing');
  return runs.map((raw) => {
    const run = raw as Record<string, unknown> | null;
    if (typeof run?.id !== 'number' || typeof run.name !== 'string' || typeof run.status !== 'string') {
      throw payloadError(what, 'a check run has no id, name or status');
    }
    const app = run.app as { slug?: unknown } | null | undefined;
    return {
      id: run.id,
      name: run.name,
      status: run.status,
      conclusion: typeof run.conclusion === 'string' ? run.conclusion : null,
      detailsUrl:
        typeof run.details_url === 'string'
          ? run.details_url
          : typeof run.html_url === 'string'
            ? run.html_url
            : null,
      appSlug: typeof app?.slug === 'string' ? app.slug : null,
    };
  });
}

/** Colour and cursor escapes (CSI), and title or hyperlink escapes (OSC). */
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
/** The timestamp Actions puts before every line (`2026-01-01T10:00:00.1234567Z `). */
const LEADING_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})\s?/;

/** The last `maxLines` lines of a job log with escapes, timestamps and trailing blank lines removed. */
export function logTail(text: string, maxLines: number): string[] {
  if (maxLines <= 0) return [];
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.replace(ANSI, '').replace(LEADING_TIMESTAMP, '').replace(/\r/g, ''));
  while (lines.length > 0 && (lines.at(-1) ?? '').trim() === '') lines.pop();
  return lines.slice(-maxLines);
}
