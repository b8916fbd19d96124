import { describe, expect, it } from 'vitest';
import { parseDotenv } from '../../src/workflow/dotenv.js';

describe('.env parsing', () => {
  it('keeps good lines and names the line of bad ones', () => {
    const result = parseDotenv(
      '# comment\n\nA=1\nexport B="two words"\nnot a pair\n9X=3\nC=\'q\'\n',
      '/p/.env',
    );
    expect(result.vars).toEqual({ A: '1', B: 'two words', C: 'q' });
    expect(result.diagnostics.map((d) => [d.code, d.line])).toEqual([
      ['env_file.syntax', 5],
      ['env_file.invalid_key', 6],
    ]);
    expect(result.diagnostics.every((d) => d.file === '/p/.env')).toBe(true);
  });

  it('does not interpolate or unescape values', () => {
    expect(parseDotenv('A=$B\\n', 'f').vars).toEqual({ A: '$B\\n' });
  });

  it('handles CRLF files', () => {
    expect(parseDotenv('A=1\r\nB=2\r\n', 'f').vars).toEqual({ A: '1', B: '2' });
  });
});
