import { describe, expect, it } from 'vitest';
import { expandAll, expandPath, expandTargeted } from '../../src/workflow/env-vars.js';

const env = { TOKEN: 'abc', EMPTY: '', HOME_DIR: '/h' };

describe('$VAR expansion', () => {
  it.each([
    ['$TOKEN', 'abc'],
    ['${TOKEN}', 'abc'],
    ['Bearer ${TOKEN}!', 'Bearer abc!'],
    ['$UNSET', ''],
    ['$$TOKEN', '$TOKEN'],
    ['cost $5', 'cost $5'],
    ['a$', 'a$'],
  ])('expands %j to %j', (input, expected) => {
    const result = expandAll(input, env);
    expect(result).toMatchObject({ ok: true, value: expected });
  });

  it.each(['${TOKEN', '${}', '${1BAD}', '${A-B}'])(
    'a malformed reference %j is an error, not a literal',
    (input) => {
      const result = expandAll(input, env);
      expect(result.ok).toBe(false);
    },
  );

  it('reports which variables were read, so an empty result can name them', () => {
    expect(expandAll('$EMPTY${TOKEN}', env)).toEqual({ ok: true, value: 'abc', names: ['EMPTY', 'TOKEN'] });
  });

  it('targeted expansion leaves values not starting with $ alone', () => {
    expect(expandTargeted('https://x/$TOKEN', env)).toMatchObject({ ok: true, value: 'https://x/$TOKEN' });
    expect(expandTargeted(' $TOKEN ', env)).toMatchObject({ ok: true, value: 'abc' });
  });

  it('paths expand ~ first and variables after', () => {
    expect(expandPath('~/ws/$TOKEN', env, '/home/op')).toMatchObject({ ok: true, value: '/home/op/ws/abc' });
    expect(expandPath('~', env, '/home/op')).toMatchObject({ ok: true, value: '/home/op' });
    expect(expandPath('a~b', env, '/home/op')).toMatchObject({ ok: true, value: 'a~b' });
  });
});
