/**
 * The files Copilot CLI writes that the adapter reads back: the usage summary of
 * each turn (at a path the adapter chooses, in a private temporary folder) and the
 * session's journal under COPILOT_HOME. Both live on this machine only, so a
 * session on an SSH host has none and its figures stay unmeasured. A file that is
 * missing or unreadable is a null, never an error: the turn is then simply not
 * covered by a figure.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RecordsRead, SpendReading } from '../usage/index.js';
import { journalReadings, reportReading } from './usage.js';

/** Copilot's state folder for an environment: COPILOT_HOME, else `$HOME/.copilot` (the CLI's own default). */
export function copilotHome(env: Readonly<Record<string, string>>): string {
  const configured = env.COPILOT_HOME;
  if (configured !== undefined && configured !== '') return path.resolve(configured);
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : os.homedir();
  return path.join(home, '.copilot');
}

/** Where the CLI keeps the journal of session `sessionId`. */
export function journalPath(home: string, sessionId: string): string {
  return path.join(home, 'session-state', sessionId, 'events.jsonl');
}

/** The session ids Copilot names its folders with; anything else is never joined into a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The files of one local session. */
export class SessionFiles {
  /** Private folder for the turns' usage summaries; made on first use. */
  #reports: string | null = null;

  constructor(readonly home: string) {}

  /** The usage summary path of turn `turn`. */
  reportPath(turn: number): string {
    this.#reports ??= mkdtempSync(path.join(os.tmpdir(), 'orchestrator-copilot-'));
    return path.join(this.#reports, `turn-${turn}.json`);
  }

  /** The summary the CLI wrote for turn `turn` as a reading; null when it wrote none. */
  readReport(turn: number, premiumRequests: number | null): SpendReading | null {
    if (this.#reports === null) return null;
    const text = readText(this.reportPath(turn));
    return text === null ? null : reportReading(text, premiumRequests);
  }

  /** The journal of `sessionId` as records; null when it cannot be read. */
  readJournal(sessionId: string): RecordsRead | null {
    if (!SESSION_ID.test(sessionId)) return null;
    const text = readText(journalPath(this.home, sessionId));
    return text === null ? null : journalReadings(text);
  }

  /** Removes the summaries folder. Idempotent. */
  dispose(): void {
    if (this.#reports !== null) rmSync(this.#reports, { recursive: true, force: true });
    this.#reports = null;
  }
}
