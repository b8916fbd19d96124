/**
 * How big a WORKFLOW.md may be. Loading runs on the service's event loop (start-up and every
 * hot reload), so an absurd file must be refused quickly with a coded error rather than parsed,
 * checked and reported key by key while the HTTP API waits. A real workflow is a few KiB and a
 * few dozen keys; the limits sit far above that.
 */
import { Lexer } from 'yaml';

/** Largest workflow file accepted, front matter and prompt together. */
export const WORKFLOW_MAX_SIZE_BYTES = 1024 * 1024;

/** Most map keys plus list items the front matter may hold, counted at every depth. */
export const WORKFLOW_MAX_ENTRIES = 5_000;

/**
 * Counts the map keys and list items of a YAML text from its tokens, stopping once the count
 * passes `stopAfter`. It runs before the text is parsed because parsing is the expensive part:
 * a file with 100,000 keys is refused after lexing its first few thousand. Keys are counted by
 * their `:` and block list items by their `-`; flow lists `[a, b]` by their commas, one short
 * per list, which is close enough for a limit.
 */
export function countEntries(yamlText: string, stopAfter: number): number {
  let count = 0;
  const open: string[] = [];
  for (const token of new Lexer().lex(yamlText)) {
    if (token === ':' || token === '-') count += 1;
    else if (token === '[' || token === '{') open.push(token);
    else if (token === ']' || token === '}') open.pop();
    else if (token === ',' && open[open.length - 1] === '[') count += 1;
    if (count > stopAfter) break;
  }
  return count;
}
