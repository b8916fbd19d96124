/**
 * The issue page: one issue as a person reads it (what it is doing now, every recorded run with
 * its turns, the comments the orchestrator made), rendered on the server into static HTML that
 * carries no script at all. `/api/v1/issues/:identifier` stays the machine-readable form.
 *
 * The trap: every value on it (identifiers, titles, errors, agent messages, comment bodies) is
 * text someone else wrote. Each one reaches the markup only through `text()`, which masks
 * secrets and then escapes `& < > " '`; the Content-Security-Policy sent with the page allows
 * no script, so a missed escape still could not run one. Identifiers may hold `/`, spaces, `<`
 * or be only dots, so links to an issue are built by `issuePath` alone.
 */
import { STYLE } from './dashboard.js';
import type { CommentView, IssueView, RunView, TurnView } from './views.js';

/** Sent with the issue pages: nothing but inline style, no script, no connection, no form. */
export const ISSUE_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Characters of a turn's final message the page shows (the JSON has it whole). */
const FINAL_MESSAGE_CHARS = 600;
const DASH = '—';

const EXTRA_STYLE = `
header h1 a { color: inherit; }
p.title { font-size: 1.05rem; margin: .9rem 0 0; overflow-wrap: anywhere; }
details { margin: .45rem 0; }
summary { cursor: pointer; color: var(--muted); }
ol.comments { list-style: none; margin: 0; padding: 0; display: grid; gap: .6rem; }
ol.comments li { background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: .5rem .8rem; }
ol.comments .meta { color: var(--muted); font-size: .8rem; }
pre.body { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0 0; font: inherit; }
p.empty { color: var(--muted); font-style: italic; }
`;

/**
 * The path of an issue's page: the identifier percent-encoded into one segment, or into the
 * query when it is `.` or `..` (a URL parser would resolve such a segment away).
 */
export function issuePath(identifier: string): string {
  const segment = encodeURIComponent(identifier);
  return segment === '.' || segment === '..' ? `/issues?identifier=${segment}` : `/issues/${segment}`;
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text safe inside an element or a quoted attribute. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** Builds markup in which every piece of data went through `text` (mask, then escape). */
class Page {
  constructor(private readonly mask: (text: string) => string) {}

  text(value: string | number | null | undefined): string {
    return value === null || value === undefined || value === ''
      ? DASH
      : escapeHtml(this.mask(String(value)));
  }

  /** A link to the issue page of `identifier`. */
  issueLink(identifier: string): string {
    return `<a href="${escapeHtml(issuePath(this.mask(identifier)))}">${this.text(identifier)}</a>`;
  }

  /** A `<td>` of text, with its field name and, for figures, the plain value. */
  cell(
    field: string,
    shown: string | number | null,
    options: { num?: boolean; value?: string | number | null; cls?: string } = {},
  ): string {
    const cls = [options.num === true ? 'num' : '', options.cls ?? ''].filter((c) => c !== '').join(' ');
    const value =
      options.value === undefined || options.value === null
        ? ''
        : ` data-value="${this.text(options.value)}"`;
    return `<td data-field="${field}"${cls === '' ? '' : ` class="${cls}"`}${value}>${this.text(shown)}</td>`;
  }

  document(title: string, body: string): string {
    return [
      '<!doctype html>',
      '<html lang="en">',
      '<head>',
      '<meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>${this.text(title)} · orchestrator</title>`,
      '<link rel="icon" href="data:,">',
      `<style>${STYLE}${EXTRA_STYLE}</style>`,
      '</head>',
      '<body>',
      body,
      '</body>',
      '</html>',
      '',
    ].join('\n');
  }
}

/** The page of one issue, from the same view `/api/v1/issues/:identifier` answers with. */
export function issuePage(view: IssueView, mask: (text: string) => string): string {
  const p = new Page(mask);
  const body = [
    header(
      p,
      view.issue_identifier,
      view.status === 'idle' && view.waiting !== null ? 'waiting' : view.status,
    ),
    '<main>',
    view.title === null ? '' : `<p class="title" data-testid="title">${p.text(view.title)}</p>`,
    '<h2>Now</h2>',
    `<dl class="config" data-testid="now">${nowRows(p, view)}</dl>`,
    `<h2>Runs <span class="count">${view.runs.length}</span></h2>`,
    runsTable(p, view.runs),
    view.runs.length === 0 ? '' : '<h2>Turns</h2>',
    ...view.runs.map((run) => turnsOf(p, run)),
    `<h2>Comments the orchestrator made <span class="count">${view.comments.length} since the service started</span></h2>`,
    comments(p, view.comments),
    `<footer><a href="/">dashboard</a> · <a href="${escapeHtml(`/api/v1/issues/${encodeURIComponent(mask(view.issue_identifier))}`)}">issue JSON</a></footer>`,
    '</main>',
  ];
  return p.document(view.issue_identifier, body.join('\n'));
}

/** The page for an identifier nothing is known about. */
export function issueNotFoundPage(identifier: string, mask: (text: string) => string): string {
  const p = new Page(mask);
  return p.document(
    identifier,
    [
      header(p, identifier, 'unknown'),
      '<main>',
      `<p class="empty" data-testid="not-found">No issue ${p.text(identifier)} is running, queued, waiting or recorded.</p>`,
      '<footer><a href="/">dashboard</a></footer>',
      '</main>',
    ].join('\n'),
  );
}

function header(p: Page, identifier: string, status: string): string {
  return [
    '<header>',
    `<h1><a href="/">orchestrator</a> / <span data-testid="identifier">${p.text(identifier)}</span></h1>`,
    `<span class="item">status <b data-testid="status" data-value="${p.text(status)}">${p.text(status)}</b></span>`,
    '</header>',
  ].join('\n');
}

function definition(p: Page, field: string, label: string, valueHtml: string): string {
  return `<dt>${p.text(label)}</dt><dd data-field="${field}">${valueHtml}</dd>`;
}

function nowRows(p: Page, view: IssueView): string {
  const rows: string[] = [];
  const row = (field: string, label: string, value: string | number | null) =>
    rows.push(definition(p, field, label, p.text(value)));
  const { running, retry, waiting } = view;
  if (running !== null) {
    row('doing', 'Doing', `running turn ${running.turn} since ${time(running.started_at)}`);
    row('attempt', 'Attempt', running.attempt);
    row('state', 'Tracker state', running.state);
    row('last_event', 'Last event', `${running.last_event} at ${time(running.last_event_at)}`);
    row('tokens', 'Tokens', integer(running.tokens.total_tokens));
    row('cost', 'Cost so far', usd(running.cost_usd));
    row('host', 'Host', running.host);
    row('session', 'Session', running.session_id);
    row('workspace', 'Workspace', running.workspace);
  } else if (retry !== null) {
    row('doing', 'Doing', `waiting for a retry due ${time(retry.due_at)}`);
    row('attempt', 'Next attempt', retry.attempt);
    row('reason', 'Why', retry.reason);
    row('last_error', 'Last error', retry.last_error);
  } else if (waiting !== null) {
    row('doing', 'Doing', 'not running');
    row('why', 'Why', waiting.detail);
    row('reason', 'Reason', waiting.reason);
    row('state', 'Tracker state', waiting.state);
    if (waiting.blocked_by.length > 0) {
      rows.push(
        definition(p, 'blocked_by', 'Waiting on', waiting.blocked_by.map((b) => p.issueLink(b)).join(', ')),
      );
    }
    row('seen_at', 'Seen so at', time(waiting.seen_at));
  } else {
    row('doing', 'Doing', 'nothing: not running, not queued and not among the candidates of the last poll');
  }
  return rows.join('');
}

function runsTable(p: Page, runs: readonly RunView[]): string {
  const head =
    '<thead><tr><th class="num">Run</th><th class="num">Attempt</th><th>Outcome</th><th class="num">Turns</th>' +
    '<th class="num">Tokens</th><th class="num">Cost</th><th>Started</th><th class="num">Duration</th><th>Error</th></tr></thead>';
  const rows = runs.map((run) => {
    const error =
      run.error_kind !== null && run.error !== null
        ? `${run.error_kind}: ${run.error}`
        : (run.error_kind ?? run.error);
    return [
      `<tr data-run-id="${run.id}">`,
      p.cell('id', run.id, { num: true }),
      p.cell('attempt', run.attempt, { num: true }),
      p.cell('outcome', run.exit_kind ?? (run.ended_at === null ? 'running' : null), {
        value: run.exit_kind,
      }),
      p.cell('turns', integer(run.turns), { num: true, value: run.turns }),
      p.cell('tokens', integer(run.tokens.total_tokens), { num: true, value: run.tokens.total_tokens }),
      p.cell('cost', usd(run.cost_usd), { num: true, value: run.cost_usd }),
      p.cell('started', time(run.started_at)),
      p.cell('duration', duration(run.started_at, run.ended_at), { num: true }),
      p.cell('error', error, { cls: 'text' }),
      '</tr>',
    ].join('');
  });
  const empty = `<tr class="empty"><td colspan="9">No runs recorded</td></tr>`;
  return `<div class="wrap"><table data-testid="runs">${head}<tbody>${rows.join('') || empty}</tbody></table></div>`;
}

function turnsOf(p: Page, run: RunView & { turn_records: TurnView[] }): string {
  const head =
    '<thead><tr><th class="num">Turn</th><th>Ended</th><th>Exit</th><th class="num">Tokens</th><th>Figures</th>' +
    '<th>Error</th><th>Final message</th></tr></thead>';
  const rows = run.turn_records.map((turn) => {
    const message =
      turn.final_message.length > FINAL_MESSAGE_CHARS
        ? `${turn.final_message.slice(0, FINAL_MESSAGE_CHARS - 1)}…`
        : turn.final_message;
    const error =
      turn.error_kind !== null && turn.error !== null
        ? `${turn.error_kind}: ${turn.error}`
        : (turn.error_kind ?? turn.error);
    return [
      `<tr data-turn="${turn.turn}">`,
      p.cell('turn', turn.turn, { num: true }),
      p.cell('ended', time(turn.ended_at)),
      p.cell('exit', turn.exit_reason),
      p.cell('tokens', integer(turn.tokens.total_tokens), { num: true, value: turn.tokens.total_tokens }),
      p.cell('provenance', turn.provenance),
      p.cell('error', error, { cls: 'text' }),
      p.cell('final_message', message, { cls: 'text' }),
      '</tr>',
    ].join('');
  });
  const empty = `<tr class="empty"><td colspan="7">No turn finished</td></tr>`;
  const summary = `run ${run.id} · attempt ${run.attempt} · ${run.exit_kind ?? (run.ended_at === null ? 'running' : DASH)} · ${run.turn_records.length} turn(s)`;
  return [
    `<details data-run-id="${run.id}" open><summary>${p.text(summary)}</summary>`,
    `<div class="wrap"><table data-testid="turns">${head}<tbody>${rows.join('') || empty}</tbody></table></div>`,
    '</details>',
  ].join('');
}

function comments(p: Page, list: readonly CommentView[]): string {
  if (list.length === 0) return '<p class="empty" data-testid="comments">None since the service started</p>';
  const items = list.map(
    (c) =>
      `<li data-lifecycle="${p.text(c.lifecycle)}" data-posted="${c.posted}">` +
      `<div class="meta">${p.text(`${time(c.at)} · ${c.lifecycle}${c.posted ? '' : ' · not posted: the tracker refused it'}`)}</div>` +
      `<pre class="body">${p.text(c.body)}</pre></li>`,
  );
  return `<ol class="comments" data-testid="comments">${items.join('')}</ol>`;
}

// ------------------------------------------------------------ formatting (server side, UTC)

function integer(n: number | null): string {
  return n === null ? DASH : Math.round(n).toLocaleString('en-US');
}

/** Dollars as the dashboard shows them; null (unknown) is a dash, never $0.00. */
export function usd(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return DASH;
  const abs = Math.abs(value);
  const digits = abs > 0 && abs < 0.01 ? 4 : 2;
  const body = abs.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${value < 0 ? '-$' : '$'}${body}`;
}

function time(iso: string | null): string {
  if (iso === null) return DASH;
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function duration(startIso: string, endIso: string | null): string {
  if (endIso === null) return DASH;
  const seconds = Math.max(0, Math.round((Date.parse(endIso) - Date.parse(startIso)) / 1_000));
  if (!Number.isFinite(seconds)) return DASH;
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return m > 0 ? `${m}m ${String(s).padStart(2, '0')}s` : `${s}s`;
}
