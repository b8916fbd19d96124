/**
 * Splits `agent.command` into a program and its arguments the way a POSIX shell
 * reads words, without ever running a shell: blanks separate words, single quotes
 * keep everything literally, double quotes keep blanks (a backslash there escapes
 * only `"`, `\`, `$` and a backquote), and a backslash outside quotes escapes the
 * next character. Nothing is expanded: `$FOO`, `~` and `*` reach the program as
 * written, locally and on SSH hosts alike, so a command means one thing everywhere.
 */

export type CommandWords = { ok: true; words: string[] } | { ok: false; message: string };

const BLANK = /[ \t\n\r]/u;
const ESCAPABLE_IN_DOUBLE = new Set(['"', '\\', '$', '`']);

/** The words of a command line; an unclosed quote or a trailing backslash is an error value. */
export function splitCommandLine(text: string): CommandWords {
  const words: string[] = [];
  let word = '';
  // A word exists once any character or quote was read: `''` is one empty argument.
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && ESCAPABLE_IN_DOUBLE.has(text[i + 1] ?? '')) word += text[++i];
      else word += c;
      continue;
    }
    if (BLANK.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') {
      if (i + 1 >= text.length) return { ok: false, message: 'the command ends with a lone backslash' };
      // A backslash before a line break joins the lines, as in a shell.
      if (text[i + 1] === '\n') {
        i++;
        if (word === '') inWord = false;
        continue;
      }
      word += text[++i];
    } else word += c;
  }
  if (quote !== null) {
    return { ok: false, message: `the command has an unclosed ${quote === "'" ? 'single' : 'double'} quote` };
  }
  if (inWord) words.push(word);
  return { ok: true, words };
}
