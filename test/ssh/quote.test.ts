/** Quoting and the environment preamble, checked against a real /bin/sh. */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { programWord } from '../../src/ssh/launch.js';
import { envPreamble, shellQuote } from '../../src/ssh/quote.js';

const noNul = fc.string({ unit: 'binary' }).map((s) => s.replaceAll('\0', ''));

describe('shellQuote', () => {
  it('any string without NUL survives /bin/sh as one word', () => {
    fc.assert(
      fc.property(noNul, (value) => {
        const out = execFileSync('/bin/sh', ['-c', `printf '%s' ${shellQuote(value)}`]);
        expect(out.toString('utf8')).toBe(value);
      }),
      { numRuns: 100 },
    );
  });
});

describe('programWord', () => {
  it.each([
    ['/opt/my agent/bin/run', '/opt/my agent/bin/run'],
    ["it's", "it's"],
    ['codex', 'codex'],
    ['~/bin/agent x', '/home/someone/bin/agent x'],
    ['~user/x', '~user/x'],
  ])('%j reaches the host shell as one word (%j), with ~/ as the host home', (program, expected) => {
    const out = execFileSync('/bin/sh', ['-c', `printf '%s' ${programWord(program)}`], {
      env: { HOME: '/home/someone', PATH: process.env.PATH ?? '' },
    });
    expect(out.toString('utf8')).toBe(expected);
  });
});

describe('envPreamble', () => {
  it('round-trips values through sh eval', () => {
    fc.assert(
      fc.property(noNul, (value) => {
        const preamble = envPreamble({ V: value }, 'END');
        if (!preamble.ok) return;
        const script = `${preamble.text.replace(/END\n$/, '')}\nprintf '%s' "$V"`;
        expect(execFileSync('/bin/sh', ['-c', script]).toString('utf8')).toBe(value);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses a name that is not a shell name, a NUL and a value holding the end line', () => {
    expect(envPreamble({ 'A-B': 'x' }, 'END')).toMatchObject({ ok: false });
    expect(envPreamble({ '1A': 'x' }, 'END')).toMatchObject({ ok: false });
    expect(envPreamble({ A: 'x\0y' }, 'END')).toMatchObject({ ok: false });
    expect(envPreamble({ A: 'x\nEND\ny' }, 'END')).toMatchObject({ ok: false });
    expect(envPreamble({ _ok1: "it's" }, 'END')).toEqual({ ok: true, text: "export _ok1='it'\\''s'\nEND\n" });
  });
});
