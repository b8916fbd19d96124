/** The known_hosts parser and the host key decision, without a server. */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decideHostKey,
  entryMatches,
  keyTypeOf,
  knownHostName,
  parseKnownHosts,
  preferredHostKeyAlgorithms,
} from '../../src/ssh/host-keys.js';

/** A syntactically valid key blob of `type` with random key bytes. */
function blob(type: string): Buffer {
  const name = Buffer.from(type);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(name.length);
  const keyLength = Buffer.alloc(4);
  keyLength.writeUInt32BE(32);
  return Buffer.concat([length, name, keyLength, randomBytes(32)]);
}

const ED = blob('ssh-ed25519');
const ED_OTHER = blob('ssh-ed25519');
const ECDSA = blob('ecdsa-sha2-nistp256');
const FILE = '/state/known_hosts';

function line(hosts: string, key: Buffer, marker = ''): string {
  return `${marker}${marker ? ' ' : ''}${hosts} ${keyTypeOf(key)} ${key.toString('base64')}`;
}

describe('parseKnownHosts', () => {
  it('keeps host lines and skips comments, blanks, CA markers and malformed lines with a reason', () => {
    const text = [
      '# comment',
      '',
      line('a.example', ED),
      line('*.example', ED, '@cert-authority'),
      line('b.example', ED_OTHER, '@revoked'),
      'only-two fields',
      'c.example ssh-ed25519 not*base64',
      `d.example ssh-rsa ${ED.toString('base64')}`,
      `${line('e.example', ECDSA)} trailing comment`,
    ].join('\n');
    const parsed = parseKnownHosts(text);
    expect(parsed.entries.map((e) => [e.line, e.hosts, e.marker])).toEqual([
      [3, 'a.example', null],
      [5, 'b.example', 'revoked'],
      [9, 'e.example', null],
    ]);
    expect(parsed.skipped.map((s) => s.line)).toEqual([4, 6, 7, 8]);
  });
});

describe('entryMatches', () => {
  const entry = (hosts: string) => parseKnownHosts(line(hosts, ED)).entries[0]!;

  it.each([
    ['host.example', 'host.example', 22, true],
    ['HOST.example', 'host.example', 22, true],
    ['host.example', 'host.example', 2222, false],
    ['[host.example]:2222', 'host.example', 2222, true],
    ['[host.example]:2222', 'host.example', 22, false],
    ['other,host.example', 'host.example', 22, true],
    ['*.example', 'host.example', 22, true],
    ['*.example,!host.example', 'host.example', 22, false],
    ['h?st.example', 'host.example', 22, true],
    ['[127.0.0.1]:*', '127.0.0.1', 4000, true],
  ])('%s names %s:%s → %s', (hosts, host, port, expected) => {
    expect(entryMatches(entry(hosts), host, port)).toBe(expected);
  });

  it('matches hashed names (|1|salt|hmac) for the port-qualified form', () => {
    const salt = randomBytes(20);
    const name = '[10.0.0.5]:2200';
    const hash = createHmac('sha1', salt).update(name).digest('base64');
    const hashed = entry(`|1|${salt.toString('base64')}|${hash}`);
    expect(entryMatches(hashed, '10.0.0.5', 2200)).toBe(true);
    expect(entryMatches(hashed, '10.0.0.5', 22)).toBe(false);
  });
});

describe('decideHostKey', () => {
  const entries = parseKnownHosts(
    [
      line('known.example', ED),
      line('[known.example]:2222', ECDSA),
      line('known.example', ED_OTHER, '@revoked'),
    ].join('\n'),
  ).entries;

  it('accepts a listed key', () => {
    expect(decideHostKey('yes', entries, 'known.example', 22, ED, FILE)).toEqual({ kind: 'accept' });
  });

  it('refuses a changed key under yes and accept-new, naming the file', () => {
    for (const policy of ['yes', 'accept-new'] as const) {
      const decision = decideHostKey(policy, entries, 'known.example', 2222, ED, FILE);
      expect(decision.kind).toBe('refuse');
      if (decision.kind === 'refuse')
        expect(decision.message).toMatch(/host key changed.*\/state\/known_hosts/);
    }
  });

  it('refuses a revoked key', () => {
    const decision = decideHostKey('accept-new', entries, 'known.example', 22, ED_OTHER, FILE);
    expect(decision).toMatchObject({ kind: 'refuse' });
    if (decision.kind === 'refuse') expect(decision.message).toContain('@revoked');
  });

  it('refuses an unknown host under yes, records it under accept-new, accepts it under no', () => {
    expect(decideHostKey('yes', entries, 'new.example', 22, ED, FILE)).toMatchObject({ kind: 'refuse' });
    expect(decideHostKey('accept-new', entries, 'new.example', 2200, ED, FILE)).toEqual({
      kind: 'record',
      line: `[new.example]:2200 ssh-ed25519 ${ED.toString('base64')}`,
    });
    expect(decideHostKey('accept-new', entries, 'new.example', 22, ED, FILE)).toEqual({
      kind: 'record',
      line: `new.example ssh-ed25519 ${ED.toString('base64')}`,
    });
    expect(decideHostKey('no', entries, 'known.example', 2222, ED, FILE)).toEqual({ kind: 'accept' });
  });
});

describe('host key names and algorithms', () => {
  it('writes the bare name on port 22 and [host]:port otherwise', () => {
    expect(knownHostName('h', 22)).toBe('h');
    expect(knownHostName('::1', 2222)).toBe('[::1]:2222');
  });

  it('offers the algorithms of already known key types first', () => {
    expect(preferredHostKeyAlgorithms(['ssh-rsa']).slice(0, 3)).toEqual([
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
    ]);
    expect(preferredHostKeyAlgorithms([])[0]).toBe('ssh-ed25519');
    expect(new Set(preferredHostKeyAlgorithms(['ecdsa-sha2-nistp256'])).size).toBe(7);
  });
});
