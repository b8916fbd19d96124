/**
 * Host key checking against an OpenSSH-format known_hosts file that the orchestrator
 * manages. Without it an SSH worker would send agent credentials to whoever answers
 * on the address. The policy mirrors OpenSSH's StrictHostKeyChecking: `yes` trusts only
 * listed keys, `accept-new` records a host on first sight and then holds it to that key,
 * `no` trusts anything and records nothing. Parsing and the decision are pure; only
 * `KnownHostsFile` reads and appends the file.
 */
import { createHmac } from 'node:crypto';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_SSH_PORT } from '../workflow/host-spec.js';

export type HostKeyPolicy = 'accept-new' | 'yes' | 'no';

/** One usable known_hosts line. */
export interface KnownHostEntry {
  /** 1-based line number, for messages. */
  line: number;
  /** Comma-separated host patterns (`*`, `?`, `!` negation), or a hashed `|1|salt|hash` name. */
  hosts: string;
  /** `@revoked` marks a key that must never be accepted; null for an ordinary entry. */
  marker: 'revoked' | null;
  /** Key type as written, e.g. `ssh-ed25519`. */
  keyType: string;
  /** The public key blob (SSH wire format). */
  key: Buffer;
}

export interface ParsedKnownHosts {
  entries: KnownHostEntry[];
  /** Lines that were not understood or are not host keys (certificate authorities), with why. */
  skipped: { line: number; why: string }[];
}

/** Parses known_hosts text; comments and blank lines are dropped, odd lines are listed in `skipped`. */
export function parseKnownHosts(text: string): ParsedKnownHosts {
  const entries: KnownHostEntry[] = [];
  const skipped: { line: number; why: string }[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/);
    let marker: KnownHostEntry['marker'] = null;
    if (fields[0]?.startsWith('@')) {
      const name = fields.shift();
      if (name === '@revoked') marker = 'revoked';
      else {
        skipped.push({ line, why: `marker ${name} is not supported` });
        continue;
      }
    }
    const [hosts, keyType, keyBase64] = fields;
    if (hosts === undefined || keyType === undefined || keyBase64 === undefined) {
      skipped.push({ line, why: 'expected "hosts keytype key"' });
      continue;
    }
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(keyBase64)) {
      skipped.push({ line, why: 'the key is not base64' });
      continue;
    }
    const key = Buffer.from(keyBase64, 'base64');
    if (keyTypeOf(key) !== keyType) {
      skipped.push({ line, why: `the key blob is not a ${keyType} key` });
      continue;
    }
    entries.push({ line, hosts, marker, keyType, key });
  }
  return { entries, skipped };
}

/** The name a host is listed under: `host` on port 22, else `[host]:port` (as OpenSSH writes it). */
export function knownHostName(host: string, port: number): string {
  return port === DEFAULT_SSH_PORT ? host : `[${host}]:${port}`;
}

/** True when the entry's host field names `host:port`. */
export function entryMatches(entry: KnownHostEntry, host: string, port: number): boolean {
  const name = knownHostName(host, port).toLowerCase();
  if (entry.hosts.startsWith('|')) return hashedMatches(entry.hosts, name);
  let matched = false;
  for (const pattern of entry.hosts.toLowerCase().split(',')) {
    if (pattern.startsWith('!')) {
      if (globMatches(pattern.slice(1), name)) return false;
    } else if (globMatches(pattern, name)) {
      matched = true;
    }
  }
  return matched;
}

/** The key type named inside an SSH public key blob (its first string), null when malformed. */
export function keyTypeOf(key: Buffer): string | null {
  if (key.length < 4) return null;
  const length = key.readUInt32BE(0);
  if (length === 0 || length > 64 || key.length < 4 + length) return null;
  return key.subarray(4, 4 + length).toString('latin1');
}

export type HostKeyDecision =
  | { kind: 'accept' }
  /** Accept and append `line` to the file. */
  | { kind: 'record'; line: string }
  | { kind: 'refuse'; message: string };

/** What to do with the key `host:port` presented, given the file's entries. */
export function decideHostKey(
  policy: HostKeyPolicy,
  entries: readonly KnownHostEntry[],
  host: string,
  port: number,
  key: Buffer,
  file: string,
): HostKeyDecision {
  if (policy === 'no') return { kind: 'accept' };
  const name = knownHostName(host, port);
  const keyType = keyTypeOf(key);
  if (keyType === null) return { kind: 'refuse', message: `host key of ${name} is malformed` };
  const matching = entries.filter((entry) => entryMatches(entry, host, port));
  const revoked = matching.find((entry) => entry.marker === 'revoked' && entry.key.equals(key));
  if (revoked !== undefined) {
    return {
      kind: 'refuse',
      message: `host key of ${name} is marked @revoked in ${file} (line ${revoked.line})`,
    };
  }
  const listed = matching.filter((entry) => entry.marker === null);
  if (listed.some((entry) => entry.key.equals(key))) return { kind: 'accept' };
  if (listed.length > 0) {
    const lines = listed.map((entry) => `${entry.line} (${entry.keyType})`).join(', ');
    return {
      kind: 'refuse',
      message:
        `host key changed for ${name}: it presented a ${keyType} key that differs from ${file} line ${lines}; ` +
        'if the change is expected, remove the old line',
    };
  }
  if (policy === 'yes') {
    return {
      kind: 'refuse',
      message: `host key of ${name} is unknown: ${name} is not in ${file} (strict host key checking is "yes")`,
    };
  }
  return { kind: 'record', line: `${name} ${keyType} ${key.toString('base64')}` };
}

/**
 * Host key algorithms to offer, those already known for the host first, so a host listed
 * with (say) an RSA key is not refused for showing its Ed25519 key instead.
 */
export function preferredHostKeyAlgorithms(knownKeyTypes: readonly string[]): string[] {
  const preferred = knownKeyTypes.flatMap((type) =>
    type === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [type],
  );
  return [...new Set([...preferred, ...DEFAULT_HOST_KEY_ALGORITHMS])].filter((name) =>
    DEFAULT_HOST_KEY_ALGORITHMS.includes(name),
  );
}

/** ssh2's default host key algorithms, in its order. */
const DEFAULT_HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/** The managed known_hosts file: read on every check, appended to (0600, directory 0700) under `accept-new`. */
export class KnownHostsFile {
  /** Appends run one at a time, so two first connects to one host record it once. */
  #writes: Promise<unknown> = Promise.resolve();
  readonly #warnedLines = new Set<string>();

  constructor(
    readonly file: string,
    readonly policy: HostKeyPolicy,
    private readonly onWarn: (message: string, fields: Record<string, unknown>) => void = () => {},
  ) {}

  /** Key types the file lists for `host:port` (empty under policy `no` or when unknown). */
  async knownKeyTypes(host: string, port: number): Promise<string[]> {
    if (this.policy === 'no') return [];
    const { entries } = await this.#read();
    return entries
      .filter((entry) => entry.marker === null && entryMatches(entry, host, port))
      .map((entry) => entry.keyType);
  }

  /** Checks (and under `accept-new` records) the key `host:port` presented; a refusal names the file. */
  verify(host: string, port: number, key: Buffer): Promise<{ ok: true } | { ok: false; message: string }> {
    if (this.policy === 'no') return Promise.resolve({ ok: true });
    const run = this.#writes.then(async () => {
      let parsed: ParsedKnownHosts;
      try {
        parsed = await this.#read();
      } catch (error) {
        return {
          ok: false as const,
          message: `cannot read known hosts file ${this.file}: ${errorMessage(error)}`,
        };
      }
      const decision = decideHostKey(this.policy, parsed.entries, host, port, key, this.file);
      switch (decision.kind) {
        case 'accept':
          return { ok: true as const };
        case 'refuse':
          return { ok: false as const, message: decision.message };
        case 'record':
          try {
            await this.#append(decision.line);
          } catch (error) {
            return {
              ok: false as const,
              message: `cannot record the host key of ${knownHostName(host, port)} in ${this.file}: ${errorMessage(error)}`,
            };
          }
          this.onWarn('recorded the host key of a new SSH host', {
            host: knownHostName(host, port),
            file: this.file,
          });
          return { ok: true as const };
        default:
          return assertNever(decision);
      }
    });
    this.#writes = run.catch(() => {});
    return run;
  }

  async #read(): Promise<ParsedKnownHosts> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], skipped: [] };
      throw error;
    }
    const parsed = parseKnownHosts(text);
    for (const { line, why } of parsed.skipped) {
      const id = `${line}:${why}`;
      if (this.#warnedLines.has(id)) continue;
      this.#warnedLines.add(id);
      this.onWarn('ignored a known_hosts line', { file: this.file, line, why });
    }
    return parsed;
  }

  async #append(line: string): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    let prefix = '';
    try {
      const current = await readFile(this.file, 'utf8');
      if (current !== '' && !current.endsWith('\n')) prefix = '\n';
    } catch {
      // Created by the append below.
    }
    await appendFile(this.file, `${prefix}${line}\n`, { mode: 0o600 });
  }
}

/** OpenSSH's hashed host names: `|1|base64(salt)|base64(HMAC-SHA1(salt, name))`. */
function hashedMatches(field: string, name: string): boolean {
  const parts = field.split('|');
  if (parts.length !== 4 || parts[1] !== '1' || parts[2] === undefined || parts[3] === undefined)
    return false;
  const salt = Buffer.from(parts[2], 'base64');
  const digest = createHmac('sha1', salt).update(name).digest('base64');
  return digest === parts[3];
}

function globMatches(pattern: string, name: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern === name;
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`).test(name);
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
