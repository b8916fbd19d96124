/**
 * The mock runtime's directive language: lines of its prompt that start with `!`.
 * Kept apart from the runtime so tests and the adapter can read directives
 * without starting the runtime.
 */

export interface Directive {
  name: string;
  args: string[];
  /** Everything after the name, trimmed. */
  rest: string;
}

/** Parses directive lines out of a prompt; non-directive lines are ignored. */
export function parseDirectives(prompt: string): Directive[] {
  const out: Directive[] = [];
  for (const raw of prompt.split(/\r?\n/)) {
    const line = raw.trim();
    const m = /^!([a-z]+)\b\s*(.*)$/.exec(line);
    if (m === null) continue;
    const rest = (m[2] ?? '').trim();
    out.push({ name: m[1] as string, args: rest === '' ? [] : rest.split(/\s+/), rest });
  }
  return out;
}
