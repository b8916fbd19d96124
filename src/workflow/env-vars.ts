/**
 * `$VAR` / `${VAR}` and `~` resolution for the few config values that may name
 * the environment. A malformed reference is an error, not a silent literal, so a
 * typo like `${GITHUB_TOKEN` cannot quietly become an empty credential.
 */
import os from 'node:os';

export type Env = Readonly<Record<string, string | undefined>>;

export type Expansion = { ok: true; value: string; names: string[] } | { ok: false; message: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Expands every `$NAME` and `${NAME}` in `value`; an unset variable becomes "". `$$` is a literal `$`. */
export function expandAll(value: string, env: Env): Expansion {
  let out = '';
  const names: string[] = [];
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch !== '$') {
      out += ch;
      continue;
    }
    const rest = value.slice(i + 1);
    if (rest.startsWith('$')) {
      out += '$';
      i++;
      continue;
    }
    if (rest.startsWith('{')) {
      const close = rest.indexOf('}');
      if (close === -1) return { ok: false, message: `unclosed "\${" in ${JSON.stringify(value)}` };
      const name = rest.slice(1, close);
      if (!NAME.test(name) || NAME.exec(name)?.[0] !== name) {
        return {
          ok: false,
          message: `invalid variable name ${JSON.stringify(name)} in ${JSON.stringify(value)}`,
        };
      }
      names.push(name);
      out += env[name] ?? '';
      i += close + 1;
      continue;
    }
    const match = NAME.exec(rest);
    if (match === null) {
      out += '$';
      continue;
    }
    names.push(match[0]);
    out += env[match[0]] ?? '';
    i += match[0].length;
  }
  return { ok: true, value: out, names };
}

/** Expands only when the trimmed value starts with `$`, so literal URLs holding `$` survive. */
export function expandTargeted(value: string, env: Env): Expansion {
  const trimmed = value.trim();
  if (!trimmed.startsWith('$')) return { ok: true, value, names: [] };
  return expandAll(trimmed, env);
}

/** Expands a leading `~` to the home directory, then every variable. */
export function expandPath(value: string, env: Env, home: string = os.homedir()): Expansion {
  const withHome = value === '~' ? home : value.startsWith('~/') ? home + value.slice(1) : value;
  return expandAll(withHome, env);
}

/** Expands only a leading `~` (values from environment overrides are never variable-expanded). */
export function expandHome(value: string, home: string = os.homedir()): string {
  return value === '~' ? home : value.startsWith('~/') ? home + value.slice(1) : value;
}
