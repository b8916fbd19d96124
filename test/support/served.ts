/**
 * Everything a running service serves over HTTP, collected as text: the dashboard, health,
 * state, runs, an issue's page, metrics and a moment of the event stream. Tests search it for
 * secrets that must never be served.
 */

/** Reads a server-sent event stream for `ms` milliseconds and returns what arrived. */
export async function readEvents(url: string, ms: number): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  let text = '';
  try {
    const response = await fetch(url, { signal: controller.signal });
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    while (reader !== undefined) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return text;
}

/** The body of every route of the service at `base`, with the issue pages of `identifiers`. */
export async function collectServed(base: string, identifiers: readonly string[]): Promise<string[]> {
  const paths = [
    '/',
    '/livez',
    '/readyz',
    '/api/v1/state',
    '/api/v1/runs?limit=50',
    '/metrics',
    ...identifiers.map((id) => `/api/v1/issues/${encodeURIComponent(id)}`),
  ];
  const bodies = await Promise.all(
    paths.map(async (p) => `${p}: ${await (await fetch(`${base}${p}`)).text()}`),
  );
  bodies.push(`/api/v1/events: ${await readEvents(`${base}/api/v1/events`, 700)}`);
  return bodies;
}

/** Which of `secrets` appear in which served body (`<path>: <secret>`); [] when none. */
export function servedLeaks(bodies: readonly string[], secrets: readonly string[]): string[] {
  return bodies.flatMap((body) =>
    secrets.filter((s) => body.includes(s)).map((s) => `${body.slice(0, body.indexOf(':'))}: ${s}`),
  );
}
