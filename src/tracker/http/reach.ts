/**
 * Whether a tracker's server answers at all. The trackers' own requests retry transport
 * failures with backoff and wait up to 30 s for an answer, which suits a service that polls
 * again; a dry run asks this first, so a server that refuses or never answers is reported in
 * well under two seconds instead of after a minute of retries. Any HTTP answer counts, even a
 * 401 or 404: the question is reachability, not credentials, so no credential travels with it.
 */
import type { Reachability } from '../registry.js';

/** Sends one unauthenticated HEAD to `url`; a failure names `address` (the configured endpoint). */
export async function reachHttp(
  url: string,
  address: string,
  timeoutMs: number,
  fetchImpl: typeof fetch = fetch,
): Promise<Reachability> {
  try {
    const response = await fetchImpl(url, {
      method: 'HEAD',
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return { ok: true };
  } catch (error) {
    return { ok: false, address, reason: failureText(error, timeoutMs) };
  }
}

function failureText(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs / 1000} s`;
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  switch ((cause as NodeJS.ErrnoException | undefined)?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not found';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'no route to the host';
    default:
      if (cause instanceof Error) return cause.message;
      return error instanceof Error ? error.message : String(error);
  }
}
