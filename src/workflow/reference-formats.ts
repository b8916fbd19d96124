/**
 * Reads the WORKFLOW.md files of the two reference formats (Symphony's and Sortie's) as they
 * were written, by moving the keys they spell differently onto ours before the schema runs.
 * The trap it avoids is a silent reinterpretation: every key moved is reported (an `info`),
 * every key dropped is reported with why (a `warning`), and a reference key never overwrites
 * one of ours that is also present: ours wins and a differing value is a warning naming both
 * lines. Keys that are ours already are left alone and never reported.
 *
 * The mapping is a table of reference-format key names; which block is an agent kind's comes
 * from the caller (the agent registry), never from a product name written here.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';

type KeyPath = readonly (string | number)[];
type Map_ = Record<string, unknown>;

/** The inputs the mapping needs besides the raw front matter. */
export interface ReferenceContext {
  /** Names of the registered agent kinds: a top-level block with one of these names is that kind's. */
  agentKinds: readonly string[];
  /** The 1-based line of the key at `path` in the file, or null (used to name both lines of a conflict). */
  lineOf?: (path: KeyPath) => number | null;
}

export interface ReferenceMapping {
  /** The front matter with reference keys moved onto ours (a copy; the input is not changed). */
  raw: Map_;
  /** One `info` per key moved or inferred, one `warning` per key dropped or shadowed, errors for ambiguity. */
  issues: ConfigIssue[];
  /** Dotted path of a moved key's new place → its place in the file, so later diagnostics point at the file. */
  moved: Map<string, KeyPath>;
}

/** Tracker keys a `tracker.provider` map (Symphony) may hold that are core tracker keys here. */
const PROVIDER_CORE_KEYS: Record<string, string> = {
  api_key: 'api_key',
  endpoint: 'endpoint',
  project_slug: 'project',
  assignee: 'assignee',
};

/** Keys of the active agent kind's block (Symphony's `codex:`) that are `agent.*` keys here. */
const AGENT_BLOCK_KEYS = ['command', 'read_timeout_ms', 'turn_timeout_ms', 'stall_timeout_ms'] as const;

/** Values of our own keys a reference format writes differently: key path → written → ours. */
const VALUE_SPELLINGS: ReadonlyArray<{ path: readonly string[]; from: string; to: string; format: string }> =
  [
    // Sortie's human-readable log lines; ours are pino's pretty output.
    { path: ['logging', 'format'], from: 'text', to: 'pretty', format: 'Sortie' },
  ];

/** Sortie's hook variables and ours; the same values under another prefix (ours count attempts from 1). */
const HOOK_VARIABLES: Record<string, string> = {
  SORTIE_ISSUE_ID: 'ORCHESTRATOR_ISSUE_ID',
  SORTIE_ISSUE_IDENTIFIER: 'ORCHESTRATOR_ISSUE_IDENTIFIER',
  SORTIE_WORKSPACE: 'ORCHESTRATOR_WORKSPACE',
  SORTIE_ATTEMPT: 'ORCHESTRATOR_ATTEMPT',
  SORTIE_SSH_HOST: 'ORCHESTRATOR_SSH_HOST',
};
const HOOK_KEYS = ['after_create', 'before_run', 'after_run', 'before_remove'] as const;
/** `$NAME` or `${NAME}` of a Sortie variable in a shell script. */
const SORTIE_VARIABLE = /\$(\{?)(SORTIE_[A-Z0-9_]+)\b/g;

function isMap(value: unknown): value is Map_ {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function absent(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Moves the keys of the reference formats onto ours and infers `agent.kind` from a lone agent block. */
export function mapReferenceFormats(input: Map_, context: ReferenceContext): ReferenceMapping {
  const raw = structuredClone(input);
  const issues: ConfigIssue[] = [];
  const moved = new Map<string, KeyPath>();
  const lineText = (path: KeyPath) => {
    const line = context.lineOf?.(path) ?? null;
    return line === null ? path.join('.') : `${path.join('.')} (line ${line})`;
  };

  /**
   * Carries `value` (written at `from`) to `key` of `target` (whose path is `to`) unless the
   * target holds a value already: then ours wins, and a different value is a warning.
   */
  const carry = (value: unknown, from: KeyPath, target: Map_, key: string, to: KeyPath, format: string) => {
    const existing = target[key];
    if (existing === undefined || existing === null) {
      target[key] = value;
      moved.set(to.join('.'), from);
      issues.push({
        severity: 'info',
        code: 'workflow.key.mapped',
        message: `${from.join('.')} read as ${to.join('.')} (${format})`,
        path: from,
      });
    } else if (same(existing, value)) {
      issues.push({
        severity: 'info',
        code: 'workflow.key.mapped',
        message: `${from.join('.')} has the same value as ${to.join('.')}, which is used (${format})`,
        path: from,
      });
    } else {
      issues.push({
        severity: 'warning',
        code: 'workflow.key.shadowed',
        message: `${lineText(from)} differs from ${lineText(to)}; ${to.join('.')} is used and ${from.join('.')} is ignored (${format})`,
        path: from,
      });
    }
  };

  const tracker = raw.tracker;
  if (isMap(tracker)) mapTracker(raw, tracker, carry, issues);
  const agentKind = inferAgentKind(raw, context, issues, lineText);
  if (agentKind !== null) liftAgentBlockKeys(raw, agentKind, carry);
  if (isMap(raw.hooks)) mapHookVariables(raw.hooks, issues);
  for (const spelling of VALUE_SPELLINGS) {
    const [section, key] = spelling.path as [string, string];
    const holder = raw[section];
    if (!isMap(holder) || typeof holder[key] !== 'string') continue;
    if ((holder[key] as string).trim().toLowerCase() !== spelling.from) continue;
    holder[key] = spelling.to;
    issues.push({
      severity: 'info',
      code: 'workflow.key.mapped',
      message: `${spelling.path.join('.')} "${spelling.from}" read as "${spelling.to}" (${spelling.format})`,
      path: spelling.path,
    });
  }
  return { raw, issues, moved };
}

type Carry = (value: unknown, from: KeyPath, target: Map_, key: string, to: KeyPath, format: string) => void;

/** Symphony's tracker spellings: `project_slug`, and the adapter-owned `provider` map. */
function mapTracker(raw: Map_, tracker: Map_, carry: Carry, issues: ConfigIssue[]): void {
  if (tracker.project_slug !== undefined) {
    carry(
      tracker.project_slug,
      ['tracker', 'project_slug'],
      tracker,
      'project',
      ['tracker', 'project'],
      'Symphony',
    );
    delete tracker.project_slug;
  }
  const provider = tracker.provider;
  if (provider === undefined) return;
  delete tracker.provider;
  if (provider === null) return;
  if (!isMap(provider)) {
    issues.push({
      severity: 'warning',
      code: 'workflow.key.ignored',
      message: "tracker.provider is ignored: it must be a map of the tracker kind's settings (Symphony)",
      path: ['tracker', 'provider'],
    });
    return;
  }
  const kind = typeof tracker.kind === 'string' ? tracker.kind.trim() : '';
  for (const [key, value] of Object.entries(provider)) {
    const from = ['tracker', 'provider', key];
    const core = PROVIDER_CORE_KEYS[key];
    if (core !== undefined) {
      carry(value, from, tracker, core, ['tracker', core], 'Symphony');
      continue;
    }
    if (kind === '' || (raw[kind] !== undefined && raw[kind] !== null && !isMap(raw[kind]))) {
      issues.push({
        severity: 'warning',
        code: 'workflow.key.ignored',
        message:
          kind === ''
            ? `${from.join('.')} is ignored: tracker.kind names no kind whose block could hold it (Symphony)`
            : `${from.join('.')} is ignored: the ${kind}: block it belongs in is not a map (Symphony)`,
        path: from,
      });
      continue;
    }
    const block: Map_ = isMap(raw[kind]) ? (raw[kind] as Map_) : {};
    raw[kind] = block;
    carry(value, from, block, key, [kind, key], 'Symphony');
  }
}

/**
 * `agent.kind` from the one agent block present when the workflow names no kind (Symphony
 * writes only a `codex:` block). Several blocks and no kind is an error naming them; no block
 * leaves the kind absent, which the config reports as missing.
 */
function inferAgentKind(
  raw: Map_,
  context: ReferenceContext,
  issues: ConfigIssue[],
  lineText: (path: KeyPath) => string,
): string | null {
  const agent = raw.agent;
  if (agent !== undefined && agent !== null && !isMap(agent)) return null;
  const written = isMap(agent) ? agent.kind : undefined;
  if (!absent(written)) return typeof written === 'string' ? written.trim() : null;
  if (written !== undefined && written !== null) return null;
  const blocks = context.agentKinds.filter((kind) => raw[kind] !== undefined);
  if (blocks.length === 1) {
    const kind = blocks[0] as string;
    raw.agent = { ...(isMap(agent) ? agent : {}), kind };
    issues.push({
      severity: 'info',
      code: 'agent.kind.inferred',
      message: `agent.kind is absent: the ${kind}: block names the agent kind "${kind}"`,
      path: [kind],
    });
    return kind;
  }
  if (blocks.length > 1) {
    issues.push({
      severity: 'error',
      code: 'agent.kind.ambiguous',
      message: `agent.kind is absent and blocks of several agent kinds are present: ${blocks
        .map((b) => lineText([b]))
        .join(', ')}; set agent.kind to the one to run`,
      path: [blocks[0] as string],
    });
  }
  return null;
}

/** The active kind's block may hold the command and timeouts (Symphony's `codex.command` …): they are `agent.*` here. */
function liftAgentBlockKeys(raw: Map_, kind: string, carry: Carry): void {
  const block = raw[kind];
  if (!isMap(block)) return;
  for (const key of AGENT_BLOCK_KEYS) {
    if (block[key] === undefined) continue;
    const agent: Map_ = isMap(raw.agent) ? (raw.agent as Map_) : {};
    raw.agent = agent;
    carry(block[key], [kind, key], agent, key, ['agent', key], 'Symphony');
    delete block[key];
  }
}

/**
 * Hooks written for Sortie read its variables (`$SORTIE_ISSUE_IDENTIFIER` …), which this service
 * does not set: a script would see them empty. The known ones are renamed to ours in the script
 * text; any other is reported, since nothing sets it.
 */
function mapHookVariables(hooks: Map_, issues: ConfigIssue[]): void {
  for (const key of HOOK_KEYS) {
    const script = hooks[key];
    if (typeof script !== 'string' || !script.includes('SORTIE_')) continue;
    const renamed = new Set<string>();
    const unknown = new Set<string>();
    hooks[key] = script.replace(SORTIE_VARIABLE, (whole, brace: string, name: string) => {
      const ours = HOOK_VARIABLES[name];
      if (ours === undefined) {
        unknown.add(name);
        return whole;
      }
      renamed.add(name);
      return `$${brace}${ours}`;
    });
    for (const name of renamed) {
      issues.push({
        severity: 'info',
        code: 'workflow.key.mapped',
        message: `hooks.${key}: $${name} read as $${HOOK_VARIABLES[name]} (Sortie)`,
        path: ['hooks', key],
      });
    }
    for (const name of unknown) {
      issues.push({
        severity: 'warning',
        code: 'workflow.key.ignored',
        message: `hooks.${key} reads $${name}, which this service does not set: the hook sees it empty (Sortie)`,
        path: ['hooks', key],
      });
    }
  }
}
