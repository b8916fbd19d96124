/**
 * The dashboard: one self-contained HTML page (inline style and one inline script, no CDN, no
 * build step) that renders /api/v1/state and /api/v1/runs and stays live through the
 * /api/v1/events stream.
 *
 * The trap it avoids: issue titles, errors and agent messages are attacker-controlled text. The
 * page never parses data as markup: the static skeleton below holds no data, and the script
 * builds every row with createElement and textContent (never innerHTML), so a title like
 * `<img src=x onerror=…>` shows as those characters. The strict Content-Security-Policy the
 * server sends (script only with the nonce, no inline handlers, connections to 'self' only) is
 * the second wall, which is why the page has no event-handler attributes and loads nothing.
 *
 * Test hooks: tables carry `data-testid`, their rows `data-issue` (the identifier), cells
 * `data-field`, and number cells the plain figure in `data-value`.
 *
 * An issue's identifier links to its page (`/issues/<identifier>`, see issue-page.ts); the
 * "Not running" table lists every other issue the orchestrator knows of, with why.
 */

/** The dashboard's stylesheet; the issue pages share it. */
export const STYLE = `
:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --fg: #1b1d21; --muted: #626873; --card: #ffffff; --border: #e1e4e8;
  --head: #f0f2f5; --accent: #1d5fd6; --good: #157a3a; --bad: #b42323; --warn: #a65a00;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #101215; --fg: #e4e6ea; --muted: #9aa1ab; --card: #181b20; --border: #2b3038;
    --head: #1f232a; --accent: #6aa8ff; --good: #4ccb7a; --bad: #ff7b7b; --warn: #f2b84b;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
header {
  position: sticky; top: 0; z-index: 1; display: flex; flex-wrap: wrap; align-items: center;
  gap: .4rem 1.4rem; padding: .7rem 1.5rem; background: var(--card); border-bottom: 1px solid var(--border);
}
header h1 { font-size: 1.05rem; margin: 0; }
header .item { color: var(--muted); }
header .item b { color: var(--fg); font-weight: 600; font-variant-numeric: tabular-nums; }
main { padding: .5rem 1.5rem 2rem; max-width: 1700px; }
h2 {
  font-size: .8rem; margin: 1.4rem 0 .45rem; text-transform: uppercase; letter-spacing: .05em;
  color: var(--muted); display: flex; gap: .6rem; align-items: baseline;
}
h2 .count { font-weight: 400; letter-spacing: 0; text-transform: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(138px, 1fr)); gap: .6rem; }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 8px; padding: .55rem .8rem; }
.card .label { color: var(--muted); font-size: .78rem; }
.card .value { font-size: 1.3rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .sub { color: var(--muted); font-size: .75rem; min-height: 1.1em; }
.wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--border); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .38rem .6rem; border-bottom: 1px solid var(--border); white-space: nowrap; vertical-align: top; }
th { font-size: .74rem; font-weight: 600; color: var(--muted); background: var(--head); }
tbody tr:last-child td { border-bottom: 0; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.clip { max-width: 24rem; overflow: hidden; text-overflow: ellipsis; }
.text { white-space: normal; min-width: 12rem; max-width: 32rem; overflow-wrap: anywhere; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; }
tr.empty td { color: var(--muted); font-style: italic; }
.good { color: var(--good); } .bad { color: var(--bad); } .warn { color: var(--warn); } .muted { color: var(--muted); }
.pill { display: inline-block; padding: 0 .5rem; border-radius: 999px; border: 1px solid currentColor; font-size: .75rem; }
.pill[hidden] { display: none; }
#connection::before {
  content: ""; display: inline-block; width: .55rem; height: .55rem; margin-right: .4rem;
  border-radius: 50%; background: currentColor; vertical-align: middle;
}
#connection { color: var(--muted); }
#connection[data-status="live"] { color: var(--good); }
#connection[data-status="reconnecting"] { color: var(--warn); }
#banner { margin: .8rem 0 0; padding: .5rem .8rem; border: 1px solid var(--bad); border-radius: 8px; color: var(--bad); }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 1.5rem; }
dl.config {
  display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; padding: .55rem .8rem;
  background: var(--card); border: 1px solid var(--border); border-radius: 8px;
}
dl.config dt { color: var(--muted); }
dl.config dd { margin: 0; overflow-wrap: anywhere; }
footer { margin-top: 1.6rem; color: var(--muted); font-size: .8rem; }
`;

const BODY = `
<header>
  <h1>orchestrator</h1>
  <span id="connection" data-testid="connection" data-status="connecting">connecting</span>
  <span class="item">version <b id="version" data-field="version">—</b></span>
  <span class="item">uptime <b id="uptime" data-field="uptime">—</b></span>
  <span class="item">running <b id="count-running" data-field="running">—</b></span>
  <span class="item">retrying <b id="count-retrying" data-field="retrying">—</b></span>
  <span class="item">not running <b id="count-waiting" data-field="waiting">—</b></span>
  <span class="item">slots <b id="slots" data-field="slots">—</b></span>
  <span id="draining" class="pill warn" hidden>draining</span>
  <span id="not-ready" class="pill bad" hidden>not ready</span>
</header>
<main>
  <div id="banner" data-testid="banner" role="alert" hidden></div>

  <h2>Totals</h2>
  <section class="cards" data-testid="totals">
    <div class="card"><div class="label">Input tokens</div><div class="value" data-field="input_tokens">—</div><div class="sub" data-field="active_input_tokens"></div></div>
    <div class="card"><div class="label">Output tokens</div><div class="value" data-field="output_tokens">—</div><div class="sub" data-field="active_output_tokens"></div></div>
    <div class="card"><div class="label">Cache read</div><div class="value" data-field="cache_read_tokens">—</div><div class="sub" data-field="active_cache_read_tokens"></div></div>
    <div class="card"><div class="label">Cache write</div><div class="value" data-field="cache_write_tokens">—</div><div class="sub" data-field="active_cache_write_tokens"></div></div>
    <div class="card"><div class="label">Total tokens</div><div class="value" data-field="total_tokens">—</div><div class="sub" data-field="active_total_tokens"></div></div>
    <div class="card"><div class="label">Cost</div><div class="value" data-field="cost_usd">—</div><div class="sub" data-field="active_cost_usd"></div><div class="sub" data-field="cost_note"></div></div>
    <div class="card"><div class="label">Runs finished / started</div><div class="value" data-field="runs">—</div><div class="sub" data-field="dispatches"></div></div>
    <div class="card"><div class="label">Agent time</div><div class="value" data-field="seconds_running">—</div><div class="sub">since start</div></div>
  </section>

  <h2>Running <span class="count" id="running-count"></span></h2>
  <div class="wrap"><table data-testid="running">
    <thead><tr><th>Issue</th><th>Title</th><th>State</th><th class="num">Turn</th><th class="num">Elapsed</th><th>Last event</th><th class="num">Tokens</th><th>Model</th><th>Host</th><th class="num">Cost</th><th>Provenance</th></tr></thead>
    <tbody></tbody>
  </table></div>

  <h2>Retry queue <span class="count" id="retry-count"></span></h2>
  <div class="wrap"><table data-testid="retrying">
    <thead><tr><th>Issue</th><th class="num">Next attempt</th><th class="num">Due in</th><th>Reason</th><th>Last error</th></tr></thead>
    <tbody></tbody>
  </table></div>

  <h2>Not running <span class="count" id="waiting-count"></span></h2>
  <div class="wrap"><table data-testid="waiting">
    <thead><tr><th>Issue</th><th>Title</th><th>State</th><th>Why</th><th>Seen</th></tr></thead>
    <tbody></tbody>
  </table></div>

  <section id="hosts-section" hidden>
  <h2>SSH hosts <span class="count" id="hosts-count"></span></h2>
  <div class="wrap"><table data-testid="hosts">
    <thead><tr><th>Host</th><th class="num">Running</th><th class="num">Cap</th><th>State</th></tr></thead>
    <tbody></tbody>
  </table></div>
  </section>

  <section id="rate-limits-section" hidden>
  <h2>Rate limits <span class="count" id="rate-limits-count"></span></h2>
  <div class="wrap"><table data-testid="rate-limits">
    <thead><tr><th>Agent kind</th><th>Limit</th><th>Window</th><th class="num">Used</th><th>Resets</th><th>Reported</th></tr></thead>
    <tbody></tbody>
  </table></div>
  </section>

  <h2>Recent runs <span class="count" id="runs-count"></span></h2>
  <div class="wrap"><table data-testid="runs">
    <thead><tr><th>Issue</th><th class="num">Attempt</th><th>Outcome</th><th class="num">Turns</th><th class="num">Tokens</th><th class="num">Cost</th><th>Started</th><th class="num">Duration</th><th>Error</th></tr></thead>
    <tbody></tbody>
  </table></div>

  <div class="columns">
    <div>
      <h2>Tokens by model (since start)</h2>
      <div class="wrap"><table data-testid="models">
        <thead><tr><th>Model</th><th class="num">Input</th><th class="num">Output</th><th class="num">Cache read</th><th class="num">Cache write</th><th class="num">Total</th></tr></thead>
        <tbody></tbody>
      </table></div>
      <h2>Adapters</h2>
      <div class="wrap"><table data-testid="adapters">
        <thead><tr><th>Kind</th><th>Health</th><th>Runnable</th><th>Version</th><th>Detail</th></tr></thead>
        <tbody></tbody>
      </table></div>
    </div>
    <div>
      <h2>Config</h2>
      <dl class="config mono" data-testid="config"></dl>
    </div>
  </div>

  <footer>
    <span id="generated-at" data-testid="generated-at">waiting for the first state</span> ·
    <a href="/api/v1/state">state JSON</a> · <a href="/api/v1/runs?limit=25">runs JSON</a> · <a href="/metrics">metrics</a>
  </footer>
</main>
`;

/*
 * The browser side. Plain ES2020 in a string (no transpiler touches it); it must not contain a
 * backtick, a dollar-brace, a backslash or the closing script tag; it runs under 'use strict'.
 */
const SCRIPT = `
(() => {
  'use strict';
  const RUNS_LIMIT = 25;
  const TICK_MS = 1000;
  let state = null;
  let stateAtMs = 0;
  let runs = [];
  let stateSeq = 0;
  let runsSeq = 0;
  let configKey = '';
  let source = null;
  let retryDelayMs = 1000;
  let lostStream = false;

  const byId = (id) => document.getElementById(id);
  const table = (name) => document.querySelector('table[data-testid="' + name + '"]');

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function setAttr(node, name, value) {
    if (value === undefined || value === null || value === '') {
      if (node.hasAttribute(name)) node.removeAttribute(name);
    } else if (node.getAttribute(name) !== String(value)) {
      node.setAttribute(name, String(value));
    }
  }

  function setText(node, text) {
    const t = text === undefined || text === null ? '' : String(text);
    if (node.textContent !== t) node.textContent = t;
  }

  // ------------------------------------------------------------ formatting

  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  const dash = '—';

  function fmtInt(v) {
    return isNum(v) ? Math.round(v).toLocaleString('en-US') : dash;
  }

  function fmtUsd(v) {
    if (!isNum(v)) return dash;
    const abs = Math.abs(v);
    const digits = abs > 0 && abs < 0.01 ? 4 : 2;
    const body = abs.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
    return (v < 0 ? '-$' : '$') + body;
  }

  const pad2 = (n) => (n < 10 ? '0' : '') + n;

  function fmtSeconds(v) {
    if (!isNum(v)) return dash;
    let s = Math.max(0, Math.floor(v));
    const d = Math.floor(s / 86400);
    s -= d * 86400;
    const h = Math.floor(s / 3600);
    s -= h * 3600;
    const m = Math.floor(s / 60);
    s -= m * 60;
    if (d > 0) return d + 'd ' + h + 'h ' + pad2(m) + 'm';
    if (h > 0) return h + 'h ' + pad2(m) + 'm ' + pad2(s) + 's';
    if (m > 0) return m + 'm ' + pad2(s) + 's';
    return s + 's';
  }

  function fmtTime(iso) {
    if (typeof iso !== 'string' || iso === '') return dash;
    const t = new Date(iso);
    if (Number.isNaN(t.getTime())) return iso;
    const time = pad2(t.getHours()) + ':' + pad2(t.getMinutes()) + ':' + pad2(t.getSeconds());
    const now = new Date();
    if (t.toDateString() === now.toDateString()) return time;
    return t.getFullYear() + '-' + pad2(t.getMonth() + 1) + '-' + pad2(t.getDate()) + ' ' + time;
  }

  function text(v) {
    if (v === undefined || v === null || v === '') return dash;
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  function tokensTitle(t) {
    if (!t || typeof t !== 'object') return '';
    return 'in ' + fmtInt(t.input_tokens) + ' · out ' + fmtInt(t.output_tokens) +
      ' · cache read ' + fmtInt(t.cache_read_tokens) + ' · cache write ' + fmtInt(t.cache_write_tokens);
  }

  const totalOf = (t) => (t && isNum(t.total_tokens) ? t.total_tokens : null);
  const modelsOf = (byModel) => (byModel && typeof byModel === 'object' ? Object.keys(byModel).sort().join(', ') : '');
  /** The issue page; an identifier of only dots goes in the query, where no URL parser resolves it away. */
  function issueHref(identifier) {
    const segment = encodeURIComponent(String(identifier));
    return segment === '.' || segment === '..' ? '/issues?identifier=' + segment : '/issues/' + segment;
  }

  function outcomeClass(kind) {
    if (kind === 'succeeded') return 'good';
    if (kind === 'failed' || kind === 'interrupted' || kind === 'budget_exhausted') return 'bad';
    if (kind === null || kind === undefined) return 'muted';
    return 'warn';
  }

  function healthClass(health) {
    if (health === 'ok' || health === 'builtin') return 'good';
    if (health === 'timeout' || health === 'error') return 'bad';
    return 'muted';
  }

  // ------------------------------------------------------------ clocks

  /** Seconds since the state arrived: the ticking columns add it to the server's figures. */
  const sinceState = () => (Date.now() - stateAtMs) / 1000;

  /** The server's clock now, from generated_at plus the time since it arrived (skew-proof). */
  function serverNowMs() {
    const at = state && Date.parse(state.generated_at);
    return isNum(at) ? at + (Date.now() - stateAtMs) : Date.now();
  }

  function secondsBetween(fromIso, toIso) {
    const from = Date.parse(fromIso);
    const to = toIso ? Date.parse(toIso) : Number.NaN;
    return isNum(from) && isNum(to) ? (to - from) / 1000 : null;
  }

  /** An open run's figures: the store has none until it ends, the running entry has them live. */
  function liveRun(run) {
    if (run.ended_at || !state || !Array.isArray(state.running)) return run;
    const entry = state.running.find((e) => e.run_id === run.id);
    return entry ? { tokens: entry.tokens, cost_usd: entry.cost_usd } : run;
  }

  // ------------------------------------------------------------ tables

  /**
   * Keyed rendering: a row keeps its element across updates (no flicker, selection survives);
   * only cells whose text or attributes changed are touched.
   */
  function renderRows(name, items, keyOf, rowAttrs, columns, emptyText) {
    const tbody = table(name).tBodies[0];
    const old = new Map();
    for (const tr of Array.from(tbody.rows)) {
      if (tr.dataset.key !== undefined) old.set(tr.dataset.key, tr);
      else tr.remove();
    }
    let previous = null;
    for (const item of items) {
      const key = String(keyOf(item));
      let tr = old.get(key);
      if (tr) {
        old.delete(key);
      } else {
        tr = document.createElement('tr');
        tr.dataset.key = key;
        for (const column of columns) {
          const td = document.createElement('td');
          td.dataset.field = column.field;
          tr.appendChild(td);
        }
      }
      const attrs = rowAttrs(item);
      for (const attr of Object.keys(attrs)) setAttr(tr, attr, attrs[attr]);
      columns.forEach((column, i) => setCell(tr.cells[i], column, column.cell(item)));
      const expected = previous ? previous.nextSibling : tbody.firstChild;
      if (expected !== tr) tbody.insertBefore(tr, expected);
      previous = tr;
    }
    for (const tr of old.values()) tr.remove();
    if (items.length === 0) {
      const tr = el('tr', null, 'empty');
      const td = el('td', emptyText);
      td.colSpan = columns.length;
      tr.appendChild(td);
      tbody.appendChild(tr);
    }
  }

  /** cell = { text, value?, title?, href?, cls? }; text always goes in as textContent. */
  function setCell(td, column, cell) {
    const shown = cell.text === undefined || cell.text === null || cell.text === '' ? dash : String(cell.text);
    if (cell.href) {
      let a = td.firstElementChild;
      if (!a || a.tagName !== 'A') {
        td.textContent = '';
        a = document.createElement('a');
        td.appendChild(a);
      }
      setAttr(a, 'href', cell.href);
      setText(a, shown);
    } else if (td.firstElementChild || td.textContent !== shown) {
      td.textContent = shown;
    }
    setAttr(td, 'data-value', cell.value);
    setAttr(td, 'title', cell.title);
    const cls = [column.cls, cell.cls].filter(Boolean).join(' ');
    if (td.className !== cls) td.className = cls;
  }

  const issueCell = (identifier, title) => ({ text: identifier, href: issueHref(identifier), title: title });
  const tokensCell = (t) => ({ text: fmtInt(totalOf(t)), value: totalOf(t), title: tokensTitle(t) });
  const costCell = (v) => ({ text: fmtUsd(v), value: isNum(v) ? v : null });

  const RUNNING_COLUMNS = [
    {
      field: 'identifier',
      cell: (r) =>
        issueCell(
          r.issue_identifier,
          'attempt ' + text(r.attempt) + ' · run ' + text(r.run_id) + ' · session ' + text(r.session_id) +
            ' · workspace ' + text(r.workspace),
        ),
    },
    { field: 'title', cls: 'clip', cell: (r) => ({ text: r.title, title: r.title }) },
    { field: 'state', cell: (r) => ({ text: r.state }) },
    { field: 'turn', cls: 'num', cell: (r) => ({ text: fmtInt(r.turn), value: r.turn }) },
    {
      field: 'elapsed',
      cls: 'num',
      cell: (r) => {
        const base = isNum(r.elapsed_seconds)
          ? r.elapsed_seconds + sinceState()
          : (serverNowMs() - Date.parse(r.started_at)) / 1000;
        return { text: fmtSeconds(base), value: isNum(base) ? Math.floor(base) : null, title: 'started ' + text(r.started_at) };
      },
    },
    {
      field: 'last_event',
      cls: 'clip',
      cell: (r) => ({ text: r.last_event, title: r.last_event_at ? 'at ' + r.last_event_at : '' }),
    },
    { field: 'tokens', cls: 'num', cell: (r) => tokensCell(r.tokens) },
    { field: 'models', cell: (r) => ({ text: modelsOf(r.tokens_by_model) }) },
    { field: 'host', cell: (r) => ({ text: r.host || 'local' }) },
    { field: 'cost', cls: 'num', cell: (r) => costCell(r.cost_usd) },
    { field: 'provenance', cell: (r) => ({ text: r.provenance }) },
  ];

  const RETRY_COLUMNS = [
    {
      field: 'identifier',
      cell: (r) => issueCell(r.issue_identifier, r.previous_host ? 'previous host ' + r.previous_host : ''),
    },
    { field: 'attempt', cls: 'num', cell: (r) => ({ text: fmtInt(r.attempt), value: r.attempt }) },
    {
      field: 'due_in',
      cls: 'num',
      cell: (r) => {
        const left = isNum(r.due_in_seconds)
          ? r.due_in_seconds - sinceState()
          : (Date.parse(r.due_at) - serverNowMs()) / 1000;
        if (!isNum(left)) return { text: dash };
        return { text: left <= 0 ? 'due now' : fmtSeconds(Math.ceil(left)), value: Math.max(0, Math.ceil(left)), title: 'due ' + text(r.due_at) };
      },
    },
    { field: 'reason', cell: (r) => ({ text: r.reason }) },
    { field: 'last_error', cls: 'text', cell: (r) => ({ text: r.last_error }) },
  ];

  const RUN_COLUMNS = [
    {
      field: 'identifier',
      cell: (r) => issueCell(r.issue_identifier, 'run ' + text(r.id) + ' · ' + text(r.agent_kind) + ' · session ' + text(r.session_id)),
    },
    { field: 'attempt', cls: 'num', cell: (r) => ({ text: fmtInt(r.attempt), value: r.attempt }) },
    {
      field: 'outcome',
      cell: (r) => ({
        text: r.exit_kind || (r.ended_at ? dash : 'running'),
        value: r.exit_kind,
        cls: outcomeClass(r.exit_kind),
      }),
    },
    { field: 'turns', cls: 'num', cell: (r) => ({ text: fmtInt(r.turns), value: r.turns }) },
    { field: 'tokens', cls: 'num', cell: (r) => tokensCell(liveRun(r).tokens) },
    {
      field: 'cost',
      cls: 'num',
      cell: (r) => {
        const cell = costCell(liveRun(r).cost_usd);
        const notes = [];
        if (r.provenance) notes.push(String(r.provenance));
        if (isNum(r.unaccounted_turns) && r.unaccounted_turns > 0) notes.push(r.unaccounted_turns + ' turn(s) not fully counted');
        cell.title = notes.join(' · ');
        return cell;
      },
    },
    { field: 'started', cell: (r) => ({ text: fmtTime(r.started_at), title: r.started_at }) },
    {
      field: 'duration',
      cls: 'num',
      cell: (r) => {
        const s = r.ended_at ? secondsBetween(r.started_at, r.ended_at) : (serverNowMs() - Date.parse(r.started_at)) / 1000;
        return { text: fmtSeconds(s), value: isNum(s) ? Math.round(s) : null };
      },
    },
    {
      field: 'error',
      cls: 'text',
      cell: (r) => ({ text: r.error_kind && r.error ? r.error_kind + ': ' + r.error : r.error_kind || r.error || '' }),
    },
  ];

  function reasonClass(reason) {
    if (reason === 'held' || reason === 'budget_exhausted' || reason === 'missing_fields') return 'bad';
    if (reason === 'blocked' || reason === 'parked') return 'warn';
    return '';
  }

  /** A held issue's full error and what releases it, from the state's held list. */
  function whyTitle(w) {
    if (w.reason !== 'held' || !state || !Array.isArray(state.held)) return w.reason;
    const hold = state.held.find((h) => h.issue_id === w.issue_id);
    if (!hold) return w.reason;
    const release = hold.released_by === 'issue_or_workflow_change' ? 'an issue edit or a WORKFLOW.md change' : 'an issue edit';
    return text(hold.error) + ' · dispatched again after ' + release;
  }

  const WAITING_COLUMNS = [
    { field: 'identifier', cell: (w) => issueCell(w.issue_identifier || w.issue_id, w.title) },
    { field: 'title', cls: 'clip', cell: (w) => ({ text: w.title, title: w.title }) },
    { field: 'state', cell: (w) => ({ text: w.state }) },
    {
      field: 'why',
      cls: 'text',
      cell: (w) => ({ text: w.detail || w.reason, value: w.reason, title: whyTitle(w), cls: reasonClass(w.reason) }),
    },
    { field: 'seen', cell: (w) => ({ text: fmtTime(w.seen_at), title: w.seen_at }) },
  ];

  const HOST_COLUMNS = [
    { field: 'host', cell: (h) => ({ text: h.host + (h.configured ? '' : ' (removed)') }) },
    { field: 'running', cls: 'num', cell: (h) => ({ text: fmtInt(h.running), value: h.running }) },
    { field: 'cap', cls: 'num', cell: (h) => ({ text: h.cap > 0 ? fmtInt(h.cap) : 'no cap', value: h.cap }) },
    {
      field: 'state',
      cls: 'text',
      cell: (h) =>
        h.down
          ? { text: 'down until ' + fmtTime(h.down.retry_at) + ': ' + h.down.reason, value: 'down' }
          : { text: 'up', value: 'up' },
    },
  ];

  function fmtPercent(v) {
    return isNum(v) ? Math.round(v * 10) / 10 + '%' : dash;
  }

  function percentClass(v) {
    if (!isNum(v)) return 'muted';
    if (v >= 100) return 'bad';
    return v >= 80 ? 'warn' : '';
  }

  /** One row per reported window of every limit (a limit that reported none has no row). */
  function rateLimitRows(limits) {
    const rows = [];
    for (const limit of limits) {
      const windows = Array.isArray(limit.windows) ? limit.windows : [];
      for (const w of windows) rows.push({ limit: limit, w: w, key: JSON.stringify([limit.agent_kind, limit.limit_id, w.window]) });
    }
    return rows;
  }

  const RATE_LIMIT_COLUMNS = [
    { field: 'agent_kind', cell: (r) => ({ text: r.limit.agent_kind }) },
    { field: 'limit', cell: (r) => ({ text: r.limit.limit_id }) },
    {
      field: 'window',
      cell: (r) => ({
        text: r.w.window + (isNum(r.w.window_minutes) ? ' (' + fmtSeconds(r.w.window_minutes * 60) + ')' : ''),
        value: r.w.window,
      }),
    },
    {
      field: 'used',
      cls: 'num',
      cell: (r) => ({ text: fmtPercent(r.w.used_percent), value: r.w.used_percent, cls: percentClass(r.w.used_percent) }),
    },
    {
      field: 'resets',
      cell: (r) => {
        const at = Date.parse(r.w.resets_at);
        if (!isNum(at)) return { text: dash };
        const left = (at - serverNowMs()) / 1000;
        return {
          text: left <= 0 ? 'reset ' + fmtTime(r.w.resets_at) : 'in ' + fmtSeconds(Math.ceil(left)) + ' (' + fmtTime(r.w.resets_at) + ')',
          value: r.w.resets_at,
          title: r.w.resets_at,
        };
      },
    },
    { field: 'observed', cell: (r) => ({ text: fmtTime(r.limit.observed_at), title: r.limit.observed_at }) },
  ];

  const tokenColumn = (field) => ({
    field: field,
    cls: 'num',
    cell: (m) => ({ text: fmtInt(m.tokens[field]), value: m.tokens[field] }),
  });
  const MODEL_COLUMNS = [
    { field: 'model', cell: (m) => ({ text: m.model }) },
    tokenColumn('input_tokens'),
    tokenColumn('output_tokens'),
    tokenColumn('cache_read_tokens'),
    tokenColumn('cache_write_tokens'),
    tokenColumn('total_tokens'),
  ];

  const ADAPTER_COLUMNS = [
    { field: 'kind', cell: (a) => ({ text: a.kind }) },
    { field: 'health', cell: (a) => ({ text: a.health, value: a.health, cls: healthClass(a.health) }) },
    { field: 'runnable', cell: (a) => ({ text: a.runnable ? 'yes' : 'no', value: String(Boolean(a.runnable)) }) },
    { field: 'version', cell: (a) => ({ text: a.version }) },
    { field: 'detail', cls: 'text', cell: (a) => ({ text: a.detail }) },
  ];

  // ------------------------------------------------------------ sections

  function setField(root, field, shown, value) {
    const node = root.querySelector('[data-field="' + field + '"]');
    if (!node) return;
    setText(node, shown);
    setAttr(node, 'data-value', value);
  }

  function renderHeader() {
    const s = state;
    setText(byId('version'), s.version || dash);
    setText(byId('uptime'), fmtSeconds(isNum(s.uptime_seconds) ? s.uptime_seconds + sinceState() : null));
    const counts = s.counts || {};
    const slots = s.slots || {};
    setText(byId('count-running'), fmtInt(counts.running));
    setAttr(byId('count-running'), 'data-value', counts.running);
    setText(byId('count-retrying'), fmtInt(counts.retrying));
    setAttr(byId('count-retrying'), 'data-value', counts.retrying);
    setText(byId('count-waiting'), fmtInt(counts.waiting));
    setAttr(byId('count-waiting'), 'data-value', counts.waiting);
    setText(byId('slots'), fmtInt(slots.available) + ' free of ' + fmtInt(slots.max));
    setAttr(byId('slots'), 'data-value', slots.available);
    byId('draining').hidden = !s.draining;
    byId('not-ready').hidden = s.ready !== false || Boolean(s.draining);
    const running = isNum(counts.running) ? counts.running : 0;
    const title = running > 0 ? 'orchestrator · ' + running + ' running' : 'orchestrator';
    if (document.title !== title) document.title = title;
  }

  function renderTotals() {
    const root = document.querySelector('[data-testid="totals"]');
    const totals = state.totals || {};
    const tokens = totals.tokens || {};
    const active = totals.active_tokens || {};
    for (const key of ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'total_tokens']) {
      setField(root, key, fmtInt(tokens[key]), tokens[key]);
      const live = active[key];
      setField(root, 'active_' + key, isNum(live) && live > 0 ? '+' + fmtInt(live) + ' in running sessions' : '', live);
    }
    setField(root, 'cost_usd', fmtUsd(totals.cost_usd), totals.cost_usd);
    setField(
      root,
      'active_cost_usd',
      isNum(totals.active_cost_usd) && totals.active_cost_usd > 0 ? '+' + fmtUsd(totals.active_cost_usd) + ' in running sessions' : '',
      totals.active_cost_usd,
    );
    // An unknown total shows as a dash (fmtUsd); this says why, and what is known.
    const unpriced = totals.unpriced_runs;
    const known = totals.known_cost_usd;
    setField(
      root,
      'cost_note',
      isNum(unpriced) && unpriced > 0
        ? fmtInt(unpriced) + (unpriced === 1 ? ' run' : ' runs') + ' without a known cost' +
            (isNum(known) && known > 0 ? ' (' + fmtUsd(known) + ' known)' : '')
        : '',
      unpriced,
    );
    setField(root, 'runs', fmtInt(totals.runs_finished) + ' / ' + fmtInt(totals.runs_started), totals.runs_finished);
    setField(root, 'dispatches', fmtInt(totals.dispatches_since_start) + ' dispatches since start', totals.dispatches_since_start);
    setField(root, 'seconds_running', fmtSeconds(totals.seconds_running), totals.seconds_running);
  }

  function configRows(prefix, value, out) {
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
      for (const key of Object.keys(value)) configRows(prefix ? prefix + '.' + key : key, value[key], out);
    } else if (Array.isArray(value)) {
      out.push([prefix, value.length === 0 ? '[]' : value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')]);
    } else if (value === null || value === undefined || (typeof value === 'object' && Object.keys(value).length === 0)) {
      out.push([prefix, dash]);
    } else {
      out.push([prefix, configValue(prefix, value)]);
    }
  }

  /** Limits where 0 means no limit. */
  const UNLIMITED_AT_ZERO = ['agent.max_sessions', 'agent.max_tokens', 'agent.max_cost_usd'];

  function configValue(key, value) {
    if (!isNum(value)) return String(value);
    if (value === 0 && UNLIMITED_AT_ZERO.includes(key)) return '0 (unlimited)';
    if (key.endsWith('_ms')) return fmtInt(value) + ' ms' + (value >= 1000 ? ' (' + fmtSeconds(value / 1000) + ')' : '');
    if (key.endsWith('_usd')) return fmtUsd(value);
    return String(value);
  }

  function renderConfig() {
    const config = state.config || {};
    const key = JSON.stringify(config);
    if (key === configKey) return;
    configKey = key;
    const rows = [];
    configRows('', config, rows);
    const dl = document.querySelector('[data-testid="config"]');
    const fragment = document.createDocumentFragment();
    for (const [name, value] of rows) {
      const dt = el('dt', name);
      const dd = el('dd', value);
      dd.dataset.field = name;
      fragment.appendChild(dt);
      fragment.appendChild(dd);
    }
    dl.replaceChildren(fragment);
  }

  function renderState() {
    if (!state) return;
    renderHeader();
    renderTotals();
    const running = Array.isArray(state.running) ? state.running : [];
    const retrying = Array.isArray(state.retrying) ? state.retrying : [];
    renderRows('running', running, (r) => r.issue_id, (r) => ({ 'data-issue': r.issue_identifier }), RUNNING_COLUMNS, 'No sessions running');
    renderRows('retrying', retrying, (r) => r.issue_id, (r) => ({ 'data-issue': r.issue_identifier }), RETRY_COLUMNS, 'Nothing queued');
    setText(byId('running-count'), String(running.length));
    setText(byId('retry-count'), String(retrying.length));
    const waiting = Array.isArray(state.waiting) ? state.waiting : [];
    renderRows(
      'waiting',
      waiting,
      (w) => w.issue_id,
      (w) => ({ 'data-issue': w.issue_identifier, 'data-reason': w.reason }),
      WAITING_COLUMNS,
      'Every issue known is running or queued',
    );
    const waitingTotal = state.counts && isNum(state.counts.waiting) ? state.counts.waiting : waiting.length;
    setText(byId('waiting-count'), waitingTotal > waiting.length ? waiting.length + ' of ' + waitingTotal : String(waiting.length));
    const hosts = Array.isArray(state.ssh_hosts) ? state.ssh_hosts : [];
    renderRows('hosts', hosts, (h) => h.host, (h) => ({ 'data-host': h.host }), HOST_COLUMNS, 'No SSH hosts');
    setText(byId('hosts-count'), String(hosts.length));
    byId('hosts-section').hidden = hosts.length === 0;
    const limits = rateLimitRows(Array.isArray(state.rate_limits) ? state.rate_limits : []);
    renderRows('rate-limits', limits, (r) => r.key, (r) => ({ 'data-kind': r.limit.agent_kind }), RATE_LIMIT_COLUMNS, 'No rate limits reported');
    setText(byId('rate-limits-count'), String(limits.length));
    byId('rate-limits-section').hidden = limits.length === 0;
    const byModel = state.tokens_by_model_since_start || {};
    const models = Object.keys(byModel).sort().map((model) => ({ model: model, tokens: byModel[model] || {} }));
    renderRows('models', models, (m) => m.model, (m) => ({ 'data-model': m.model }), MODEL_COLUMNS, 'No usage yet');
    const adapters = Array.isArray(state.adapters) ? state.adapters : [];
    renderRows('adapters', adapters, (a) => a.kind, (a) => ({ 'data-kind': a.kind }), ADAPTER_COLUMNS, 'No adapters reported');
    renderConfig();
    const generated = byId('generated-at');
    setText(generated, 'state at ' + fmtTime(state.generated_at));
    setAttr(generated, 'data-value', state.generated_at);
  }

  function renderRuns() {
    const sorted = runs.slice().sort((a, b) => {
      const at = Date.parse(a.started_at) || 0;
      const bt = Date.parse(b.started_at) || 0;
      return bt - at || Number(b.id) - Number(a.id);
    });
    const shown = sorted.slice(0, RUNS_LIMIT);
    renderRows('runs', shown, (r) => r.id, (r) => ({ 'data-issue': r.issue_identifier, 'data-run-id': r.id }), RUN_COLUMNS, 'No runs yet');
    setText(byId('runs-count'), String(shown.length));
  }

  function render() {
    renderState();
    renderRuns();
  }

  // ------------------------------------------------------------ data

  function banner(message) {
    const node = byId('banner');
    setText(node, message || '');
    node.hidden = !message;
  }

  function applyState(next) {
    if (!next || typeof next !== 'object') return;
    stateSeq += 1;
    state = next;
    stateAtMs = Date.now();
    render(); // open runs take their live figures from the state
    refreshRunsForNewSessions();
  }

  /**
   * The stream sends the runs when one ends; a run that just started is in the store already,
   * so the history is read again once for every running run it does not show yet.
   */
  const askedForRun = new Set();
  function refreshRunsForNewSessions() {
    const running = Array.isArray(state.running) ? state.running : [];
    const shown = new Set(runs.map((r) => r.id));
    const missing = running.filter((e) => e.run_id !== null && !shown.has(e.run_id) && !askedForRun.has(e.run_id));
    if (missing.length === 0) return;
    for (const e of missing) askedForRun.add(e.run_id);
    const seenRuns = runsSeq;
    getJson('/api/v1/runs?limit=' + RUNS_LIMIT)
      .then((r) => {
        if (runsSeq === seenRuns) applyRuns(r);
      })
      .catch(() => {});
  }

  function applyRuns(next) {
    const list = Array.isArray(next) ? next : next && Array.isArray(next.runs) ? next.runs : null;
    if (!list) return;
    runsSeq += 1;
    runs = list;
    renderRuns();
  }

  async function getJson(url) {
    const response = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
    if (!response.ok) throw new Error(url + ': HTTP ' + response.status);
    return response.json();
  }

  /** Loads both documents unless the stream delivered newer ones meanwhile. */
  function load() {
    const seenState = stateSeq;
    const seenRuns = runsSeq;
    getJson('/api/v1/state')
      .then((s) => {
        if (stateSeq === seenState) applyState(s);
        banner('');
      })
      .catch((e) => banner('Could not load the state: ' + e.message));
    getJson('/api/v1/runs?limit=' + RUNS_LIMIT)
      .then((r) => {
        if (runsSeq === seenRuns) applyRuns(r);
      })
      .catch(() => {});
  }

  function connection(status, label) {
    const node = byId('connection');
    setAttr(node, 'data-status', status);
    setText(node, label);
  }

  function parsed(event, apply) {
    try {
      apply(JSON.parse(event.data));
    } catch (e) {
      banner('Unreadable event from the server: ' + e.message);
    }
  }

  function connect() {
    if (source) source.close();
    source = new EventSource('/api/v1/events');
    source.addEventListener('open', () => {
      retryDelayMs = 1000;
      connection('live', 'live');
      // After a gap the stream may have missed changes: read both documents again.
      if (lostStream) load();
      lostStream = false;
    });
    source.addEventListener('error', () => {
      lostStream = true;
      connection('reconnecting', 'reconnecting');
      if (source.readyState === EventSource.CLOSED) {
        setTimeout(connect, retryDelayMs);
        retryDelayMs = Math.min(retryDelayMs * 2, 30000);
      }
    });
    source.addEventListener('state', (e) => parsed(e, applyState));
    source.addEventListener('runs', (e) => parsed(e, applyRuns));
  }

  load();
  connect();
  setInterval(render, TICK_MS);
})();
`;

const attributeEscapes: Record<string, string> = {
  '&': '&amp;',
  '"': '&quot;',
  "'": '&#39;',
  '<': '&lt;',
  '>': '&gt;',
};

/** The page; `nonce` must match the Content-Security-Policy the server sends with it. */
export function dashboardPage(nonce: string): string {
  const n = nonce.replace(/[&"'<>]/g, (c) => attributeEscapes[c] ?? c);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>orchestrator</title>',
    '<link rel="icon" href="data:,">',
    `<style nonce="${n}">${STYLE}</style>`,
    '</head>',
    '<body>',
    BODY,
    `<script nonce="${n}">${SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
