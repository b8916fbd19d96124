import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SSH_PORT, parseHostSpec } from '../../src/workflow/host-spec.js';

describe('parseHostSpec: entries that are accepted', () => {
  it.each([
    ['build1', { user: null, host: 'build1', port: 22 }],
    ['build1.internal', { user: null, host: 'build1.internal', port: 22 }],
    ['build1.internal:2222', { user: null, host: 'build1.internal', port: 2222 }],
    ['ci@build1', { user: 'ci', host: 'build1', port: 22 }],
    ['ci.bot_1@10.0.0.7:65535', { user: 'ci.bot_1', host: '10.0.0.7', port: 65_535 }],
    ['[::1]', { user: null, host: '::1', port: 22 }],
    ['[::1]:2222', { user: null, host: '::1', port: 2222 }],
    ['deploy@[fe80::1%eth0]:22', { user: 'deploy', host: 'fe80::1%eth0', port: 22 }],
    ['  build1  ', { user: null, host: 'build1', port: 22 }],
    ['build1:1', { user: null, host: 'build1', port: 1 }],
    ['build1:00022', { user: null, host: 'build1', port: 22 }],
  ])('%j parses to user, host and port', (spec, expected) => {
    expect(parseHostSpec(spec)).toEqual({ ok: true, value: expected });
  });

  it('the default port is 22', () => {
    expect(DEFAULT_SSH_PORT).toBe(22);
  });

  it('the user is split at the LAST "@", so a host cannot smuggle in a second user', () => {
    const parsed = parseHostSpec('a@b@host');
    expect(parsed.ok).toBe(false);
  });
});

describe('parseHostSpec: entries that are refused, with the reason', () => {
  it.each([
    ['', 'is empty'],
    ['   ', 'is empty'],
    ['build 1', 'contains whitespace'],
    ['build1\tx', 'contains whitespace'],
    ['@build1', 'empty user'],
    ['-oProxyCommand=x@build1', 'invalid user'],
    ['c i@build1', 'contains whitespace'],
    ['build1:', 'invalid port ""'],
    ['build1:ssh', 'invalid port "ssh"'],
    ['build1:0', 'port outside 1-65535'],
    ['build1:65536', 'port outside 1-65535'],
    ['build1:123456', 'invalid port'],
    ['build1:22:22', 'in brackets'],
    ['fe80::1', 'in brackets'],
    ['[fe80::1', 'without "]"'],
    ['[fe80::1]x', 'unexpected text "x"'],
    ['[build1]:22', 'not an IPv6 address'],
    [':22', 'no host name'],
    ['ci@', 'no host name'],
    ['-oProxyCommand=evil', 'starting with "-"'],
    ['-build1', 'starting with "-"'],
    ['ci@-build1:22', 'starting with "-"'],
    ['build1;rm', 'invalid host name'],
    ['build1/x', 'invalid host name'],
    ["build'1", 'invalid host name'],
  ])('%j is refused: %s', (spec, why) => {
    const parsed = parseHostSpec(spec);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toContain(why);
      expect(parsed.message).toContain(`"${spec}"`);
    }
  });
});

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const hostName = fc.array(label, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.'));
const ipv6 = fc.ipV6();
const user = fc.stringMatching(/^[A-Za-z0-9._][A-Za-z0-9._-]{0,11}$/);
const port = fc.integer({ min: 1, max: 65_535 });

describe('parseHostSpec: properties', () => {
  it('any user, host and port written in the documented form come back unchanged', () => {
    fc.assert(
      fc.property(
        fc.option(user, { nil: null }),
        fc.oneof(
          hostName.map((h) => ({ host: h, text: h })),
          ipv6.map((h) => ({ host: h, text: `[${h}]` })),
        ),
        fc.option(port, { nil: null }),
        (u, h, p) => {
          const spec = `${u === null ? '' : `${u}@`}${h.text}${p === null ? '' : `:${p}`}`;
          expect(parseHostSpec(spec)).toEqual({
            ok: true,
            value: { user: u, host: h.host, port: p ?? DEFAULT_SSH_PORT },
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never throws, and an accepted entry has no whitespace, quote or shell metacharacter in it', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (spec) => {
        const parsed = parseHostSpec(spec);
        if (parsed.ok) {
          const { user: u, host, port: p } = parsed.value;
          expect(host).not.toBe('');
          expect(`${u ?? ''}${host}`).not.toMatch(/[\s'"`$;&|<>()\\/]/);
          expect(p).toBeGreaterThanOrEqual(1);
          expect(p).toBeLessThanOrEqual(65_535);
        } else {
          expect(parsed.message).toMatch(/^ssh host ".*": /s);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('an unbracketed address with more than one colon is always refused rather than guessed', () => {
    fc.assert(
      fc.property(
        ipv6.filter((a) => a.split(':').length > 2),
        (address) => {
          expect(parseHostSpec(address).ok).toBe(false);
        },
      ),
    );
  });
});
