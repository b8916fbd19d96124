/**
 * The one sanitiser for text that leaves an agent turn (tool arguments, messages):
 * every adapter's output is cleaned the same way, once, before anything stores,
 * streams or serves it. Adapters pass text as the runtime sent it.
 */
import { StringDecoder } from 'node:string_decoder';
import { MASK, MaskedValues } from '../../domain/masked-values.js';

export { MASK };

/** Secret values to mask wherever they appear, registered by the composition root. */
const secrets = new MaskedValues();

/** Registers secret values (tokens, credentials) to be masked in every sanitised text. */
export function registerSecrets(values: Iterable<string>): void {
  secrets.add(values);
}

/** Stops masking `values` (a session's token once the session ended, so the set stays small). */
export function forgetSecrets(values: Iterable<string>): void {
  secrets.delete(values);
}

/** Forgets every registered secret (tests). */
export function clearSecrets(): void {
  secrets.clear();
}

/** Replaces every registered secret value in `text`. */
export function maskSecrets(text: string): string {
  return secrets.mask(text);
}

const SHELL_WRAPPER =
  /^\s*(?:\/usr\/bin\/env\s+)?(?:\/bin\/|\/usr\/bin\/)?(?:bash|sh|zsh|dash)\s+-(?:l?c|cl)\s+([\s\S]*)$/;

/** `bash -lc 'cmd'` → `cmd`; leaves anything else alone. */
export function unwrapShell(command: string): string {
  const m = SHELL_WRAPPER.exec(command);
  if (m === null) return command;
  const inner = (m[1] ?? '').trim();
  const quote = inner[0];
  if ((quote === "'" || quote === '"') && inner.endsWith(quote) && inner.length >= 2) {
    const body = inner.slice(1, -1);
    return quote === "'" ? body.replace(/'\\''/g, "'") : body.replace(/\\(["\\$`])/g, '$1');
  }
  return inner;
}

/** Control characters (except tab and newline) become U+FFFD so logs and terminals stay intact. */
export function replaceControlCharacters(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\uFFFD');
}

/** Cuts text longer than `maxChars`, saying how much was dropped. */
export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const dropped = text.length - maxChars;
  return `${text.slice(0, maxChars)}… [${dropped} more characters]`;
}

/**
 * Cap on the final message of a turn, in UTF-8 bytes, cut note included. It is stored with
 * every turn and posted as a tracker comment, and a runtime can end a turn with megabytes of
 * text; 60 KiB keeps a comment built from it, with its own framing, under GitHub's
 * 65,536-character comment limit.
 */
export const FINAL_MESSAGE_MAX_BYTES = 60 * 1024;

/** The note that ends a message cut at `maxBytes`; `sizeBytes` is the whole message's size. */
export function cutMessageNote(sizeBytes: number, maxBytes: number): string {
  return `\n… [message cut: it had ${sizeBytes} bytes, over the cap of ${maxBytes}]`;
}

/**
 * Keeps `text` whole when it fits in `maxBytes` UTF-8 bytes; otherwise its head, never ending
 * in half a character, followed by the cut note, together within `maxBytes`.
 */
export function capMessageBytes(text: string, maxBytes: number = FINAL_MESSAGE_MAX_BYTES): string {
  const sizeBytes = Buffer.byteLength(text, 'utf8');
  if (sizeBytes <= maxBytes) return text;
  const note = cutMessageNote(sizeBytes, maxBytes);
  const headBytes = Math.max(0, maxBytes - Buffer.byteLength(note, 'utf8'));
  // A character is at least one byte, so only the first `headBytes` characters can be in the head.
  let prefix = text.slice(0, headBytes);
  const last = prefix.charCodeAt(prefix.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) prefix = prefix.slice(0, -1);
  const head = new StringDecoder('utf8').write(Buffer.from(prefix, 'utf8').subarray(0, headBytes));
  return `${head}${note}`;
}

export interface SanitizeOptions {
  /** Workspace path to strip from paths and commands. */
  workspacePath?: string;
  /** Unwrap a `bash -lc` / `sh -c` wrapper (shell tool arguments). */
  unwrapShell?: boolean;
  maxChars?: number;
}

const DEFAULT_MAX_CHARS = 500;

/** Unwraps, strips the workspace, replaces control characters, masks secrets, truncates: in that order. */
export function sanitize(text: string, options: SanitizeOptions = {}): string {
  let out = options.unwrapShell ? unwrapShell(text) : text;
  if (options.workspacePath) {
    const root = options.workspacePath.replace(/\/+$/, '');
    out = out.split(`${root}/`).join('').split(root).join('.');
  }
  out = replaceControlCharacters(out);
  out = maskSecrets(out);
  return truncate(out, options.maxChars ?? DEFAULT_MAX_CHARS);
}
