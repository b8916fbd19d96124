import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from '../../src/workflow/command-line.js';

const words = (text: string): string[] => {
  const split = splitCommandLine(text);
  if (!split.ok) throw new Error(split.message);
  return split.words;
};

describe('splitCommandLine', () => {
  it.each([
    ['node fake.mjs --x "$FOO" \'a b\'', ['node', 'fake.mjs', '--x', '$FOO', 'a b']],
    ['  codex   app-server ', ['codex', 'app-server']],
    ['a\\ b c', ['a b', 'c']],
    ['"a \\"quoted\\" \\$HOME \\n"', ['a "quoted" $HOME \\n']],
    ["'it''s'", ['its']],
    ["x '' y", ['x', '', 'y']],
    ['pre"mid dle"post', ['premid dlepost']],
    ['~/bin/agent *.md', ['~/bin/agent', '*.md']],
    ['tool \\\n  --flag', ['tool', '--flag']],
    ["'don'\\''t'", ["don't"]],
    ['', []],
  ])('%j splits into %j, with quotes honoured and nothing expanded', (text, expected) => {
    expect(words(text)).toEqual(expected);
  });

  it.each([
    ['node "unclosed', 'double quote'],
    ["node 'unclosed", 'single quote'],
    ['node trailing\\', 'backslash'],
  ])('%j is refused with a reason (%s)', (text, reason) => {
    const split = splitCommandLine(text);
    expect(split.ok).toBe(false);
    if (!split.ok) expect(split.message).toContain(reason);
  });

  it('any list of words, single-quoted and joined, splits back into the same words', () => {
    const quote = (w: string) => `'${w.replaceAll("'", "'\\''")}'`;
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }), (list) => {
        expect(words(list.map(quote).join(' '))).toEqual(list);
      }),
      { numRuns: 500 },
    );
  });
});
