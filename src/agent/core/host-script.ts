/**
 * Runs one preparation script on an SSH host (a managed home made by the host's own user) and
 * turns every way it can fail into one message: the host unreachable, a throw, a timeout, a
 * non-zero exit. Kinds that keep a home on the host share it; what the script prints is theirs.
 */
import type { RemoteHost } from '../../domain/remote.js';

/** Output kept from a preparation script, and shown (its end) when it fails. */
const MAX_OUTPUT_BYTES = 64 * 1024;
const SHOWN_TAIL_CHARS = 2_000;

/** The script's trimmed output when it exited 0 within `timeoutMs`, else why not. */
export async function runHostScript(
  host: RemoteHost,
  script: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ ok: true; output: string } | { ok: false; message: string }> {
  let ran: Awaited<ReturnType<RemoteHost['run']>>;
  try {
    ran = await host.run({ script, cwd: null, env, timeoutMs, maxOutputBytes: MAX_OUTPUT_BYTES });
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  if (!ran.ok) return { ok: false, message: ran.message };
  const { result } = ran;
  const output = result.output.trim();
  if (result.timedOut) return { ok: false, message: `the script timed out after ${timeoutMs} ms` };
  if (result.exitCode !== 0) {
    return {
      ok: false,
      message: `the script ended with ${result.exitCode ?? result.signal ?? 'no status'}: ${outputTail(output)}`,
    };
  }
  return { ok: true, output };
}

/** The end of a script's output, for a message. */
export function outputTail(output: string): string {
  return output.slice(-SHOWN_TAIL_CHARS);
}
