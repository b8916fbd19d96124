/**
 * The front-matter schema: every key, its type, its default and its range, in one
 * place. Integers accept what operators actually write (`20`, `20.0`, `"20"`);
 * `null` (a key with no value) means "use the default". Cross-field rules live in
 * rules.ts so this file stays a plain description of the keys.
 */
import { z } from 'zod';

/** Turns integral strings and integral floats into numbers; null into "absent". */
function coerceInt(value: unknown): unknown {
  if (value === null) return undefined;
  if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) return Number(value.trim());
  return value;
}

function coerceNumber(value: unknown): unknown {
  if (value === null) return undefined;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return value;
}

function absentIfNull(value: unknown): unknown {
  return value === null ? undefined : value;
}

interface IntOptions {
  min?: number;
  max?: number;
  /** 0 means "use the default" rather than a literal zero. */
  zeroIsDefault?: boolean;
}

/** An integer key with a default. */
function int(defaultValue: number, options: IntOptions = {}) {
  let base = z.number().int();
  if (options.min !== undefined) base = base.min(options.min);
  if (options.max !== undefined) base = base.max(options.max);
  return z
    .preprocess(coerceInt, base.optional())
    .transform((v) => (v === undefined || (options.zeroIsDefault === true && v === 0) ? defaultValue : v));
}

/** An integer key whose absence matters (undefined when not written). */
function optionalInt(options: IntOptions = {}) {
  let base = z.number().int();
  if (options.min !== undefined) base = base.min(options.min);
  if (options.max !== undefined) base = base.max(options.max);
  return z.preprocess(coerceInt, base.optional());
}

/** A non-negative number (money, rates) with a default. */
function amount(defaultValue: number) {
  return z.preprocess(coerceNumber, z.number().min(0).optional()).transform((v) => v ?? defaultValue);
}

function bool(defaultValue: boolean) {
  return z.preprocess(absentIfNull, z.boolean().optional()).transform((v) => v ?? defaultValue);
}

function optionalString() {
  return z.preprocess(absentIfNull, z.string().optional());
}

function stringWithDefault(defaultValue: string) {
  return z.preprocess(absentIfNull, z.string().optional()).transform((v) => v ?? defaultValue);
}

function enumWithDefault<const T extends readonly [string, ...string[]]>(values: T, defaultValue: T[number]) {
  return z
    .preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : absentIfNull(v)), z.enum(values).optional())
    .transform((v) => v ?? defaultValue);
}

/** A list of state names; numbers and booleans are written as text, other shapes are refused. */
function stateList() {
  return z
    .preprocess(
      absentIfNull,
      z
        .array(
          z.preprocess(
            (v) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v),
            z.string().trim().min(1),
          ),
        )
        .optional(),
    )
    .transform((v) => v ?? []);
}

function section<T extends z.ZodRawShape>(shape: T) {
  return z.preprocess((v) => (v === null || v === undefined ? {} : v), z.object(shape));
}

const trackerSchema = section({
  kind: optionalString(),
  endpoint: stringWithDefault(''),
  api_key: stringWithDefault(''),
  project: stringWithDefault(''),
  query_filter: stringWithDefault(''),
  assignee: optionalString(),
  required_labels: z
    .preprocess(absentIfNull, z.array(z.preprocess((v) => (v === null ? '' : v), z.string())).optional())
    .transform((v) => v ?? []),
  active_states: stateList(),
  terminal_states: stateList(),
  handoff_state: optionalString(),
  in_progress_state: optionalString(),
  blocked_state: optionalString(),
  comments: section({
    on_dispatch: bool(false),
    on_completion: bool(false),
    on_failure: bool(false),
    on_blocked: bool(true),
  }),
});

const reactionSchema = z.preprocess(
  (v) => (v === null ? {} : v),
  z
    .object({
      provider: optionalString(),
      max_retries: int(2, { min: 0 }),
      escalation: enumWithDefault(['label', 'comment'], 'label'),
      escalation_label: stringWithDefault('needs-human'),
      max_log_lines: int(50, { min: 0 }),
      // Below 10 s a warning: each poll is three forge reads per watched pull request.
      poll_interval_ms: int(120_000, { min: 1_000 }),
      debounce_ms: int(60_000, { min: 0 }),
      max_continuation_turns: int(3, { min: 1 }),
      // A watched pull request with nothing to react to is let go this long after its last push.
      ttl_ms: int(604_800_000, { min: 60_000 }),
      merge_method: enumWithDefault(['merge', 'squash', 'rebase'], 'squash'),
      done_state: optionalString(),
    })
    .catchall(z.unknown()),
);

const tokenRateSchema = section({
  input_per_mtok: amount(0),
  output_per_mtok: amount(0),
  cache_read_per_mtok: amount(0),
  cache_write_per_mtok: amount(0),
});

/** The whole front matter; unknown top-level keys pass through (pass-through blocks). */
export const frontMatterSchema = z
  .object({
    tracker: trackerSchema,
    polling: section({ interval_ms: int(30_000, { min: 0, zeroIsDefault: true }) }),
    workspace: section({ root: optionalString() }),
    hooks: section({
      after_create: optionalString(),
      before_run: optionalString(),
      after_run: optionalString(),
      before_remove: optionalString(),
      timeout_ms: int(60_000, { min: 0, zeroIsDefault: true }),
    }),
    agent: section({
      kind: optionalString(),
      command: optionalString(),
      turn_timeout_ms: int(3_600_000, { min: 0, zeroIsDefault: true }),
      read_timeout_ms: int(5_000, { min: 0, zeroIsDefault: true }),
      stall_timeout_ms: int(300_000, { min: 0 }),
      // Agents run below the service's CPU priority so its API and timers stay prompt while they boot.
      nice: int(10, { min: 0, max: 19 }),
      max_concurrent_agents: int(10, { min: 0, zeroIsDefault: true }),
      max_turns: int(20, { min: 0, zeroIsDefault: true }),
      max_retry_backoff_ms: int(300_000, { min: 0, zeroIsDefault: true }),
      max_concurrent_agents_by_state: z
        .preprocess(
          absentIfNull,
          z.record(z.string(), z.preprocess(coerceInt, z.number().int().min(1))).optional(),
        )
        .transform((v) => v ?? {}),
      max_sessions: int(0, { min: 0 }),
      max_tokens: int(0, { min: 0 }),
      max_cost_usd: amount(0),
      // Sessions in a row that leave the issue in the state they found it in; 0 = no cap.
      max_unchanged_sessions: int(5, { min: 0 }),
      mcp_config: optionalString(),
    }),
    db_path: optionalString(),
    ci_feedback: z.preprocess(
      absentIfNull,
      z
        .object({
          kind: optionalString(),
          max_retries: int(2, { min: 0 }),
          max_log_lines: int(50, { min: 0 }),
          escalation: enumWithDefault(['label', 'comment'], 'label'),
          escalation_label: stringWithDefault('needs-human'),
        })
        .optional(),
    ),
    // `git:` written with no keys turns the block on with its defaults.
    git: z.preprocess(
      (v) => (v === null ? {} : v),
      z
        .object({
          base_branch: stringWithDefault('main'),
          branch: stringWithDefault('agent/{{ issue.identifier | slug }}'),
          remote: stringWithDefault('origin'),
          push: bool(true),
          require_changes: bool(true),
          pull_request: section({
            enabled: bool(true),
            draft: bool(false),
            title: stringWithDefault('{{ issue.identifier }}: {{ issue.title }}'),
            body: stringWithDefault(''),
            labels: z.preprocess(absentIfNull, z.array(z.string()).optional()).transform((v) => v ?? []),
            link_issue: bool(true),
          }),
        })
        .optional(),
    ),
    reactions: z
      .preprocess(absentIfNull, z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), reactionSchema).optional())
      .transform((v) => v ?? {}),
    self_review: section({
      enabled: bool(false),
      max_iterations: int(3, { min: 1, max: 10 }),
      verification_commands: z.preprocess(absentIfNull, z.array(z.string().min(1)).optional()),
      verification_timeout_ms: int(120_000, { min: 1 }),
      max_diff_bytes: int(102_400, { min: 1 }),
      reviewer: enumWithDefault(['same'], 'same'),
    }),
    tools: section({
      enabled: bool(true),
      allow_other_issues: bool(false),
      max_comment_chars: int(10_000, { min: 1, max: 65_536 }),
    }),
    server: section({
      // No default here: a port the operator wrote must be free, the default may be busy.
      port: optionalInt({ min: 0, max: 65_535 }),
      host: stringWithDefault('127.0.0.1'),
      // Kept as written, like worker.ssh_hosts, so a bad entry is reported at its own line.
      allowed_hosts: z.preprocess(absentIfNull, z.array(z.string()).optional()).transform((v) => v ?? []),
    }),
    logging: section({
      level: enumWithDefault(['debug', 'info', 'warn', 'error'], 'info'),
      format: enumWithDefault(['auto', 'json', 'pretty'], 'auto'),
    }),
    worker: section({
      // Kept as written (blanks, duplicates) so a bad entry is reported at its own line;
      // config.ts parses, trims and de-duplicates.
      ssh_hosts: z.preprocess(absentIfNull, z.array(z.string()).optional()).transform((v) => v ?? []),
      max_concurrent_agents_per_host: int(0, { min: 0 }),
      ssh_strict_host_key_checking: enumWithDefault(['accept-new', 'yes', 'no'], 'accept-new'),
      ssh_identity_file: optionalString(),
      ssh_known_hosts_file: optionalString(),
      ssh_user: optionalString(),
      ssh_connect_timeout_ms: int(30_000, { min: 1 }),
      ssh_forward_env: z.preprocess(absentIfNull, z.array(z.string()).optional()).transform((v) => v ?? []),
    }),
    token_rates: z
      .preprocess(absentIfNull, z.record(z.string(), tokenRateSchema).optional())
      .transform((v) => v ?? {}),
  })
  .catchall(z.unknown());

export type FrontMatter = z.output<typeof frontMatterSchema>;

/** Known keys below each path of the schema, for unknown-key warnings. null = free-form map. */
export function knownKeys(path: readonly string[]): string[] | null {
  let schema: z.ZodType = frontMatterSchema;
  for (const segment of path) {
    const next = child(schema, segment);
    if (next === undefined) return null;
    schema = next;
  }
  const shape = objectShape(schema);
  return shape === null ? null : Object.keys(shape);
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The object shape behind wrappers (optional, default, preprocess pipes), or null when not an object. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | null {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      return def.catchall !== undefined && def.shape !== undefined && schema !== frontMatterSchema
        ? null
        : (def.shape ?? null);
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
      return def.innerType ? objectShape(def.innerType) : null;
    case 'pipe': {
      const fromIn = def.in ? objectShape(def.in) : null;
      return fromIn ?? (def.out ? objectShape(def.out) : null);
    }
    default:
      return null;
  }
}

function child(schema: z.ZodType, key: string): z.ZodType | undefined {
  const shape = objectShape(schema);
  return shape?.[key];
}
