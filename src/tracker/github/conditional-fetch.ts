/**
 * Conditional reads below the API client. Every GET goes out with `If-None-Match` when an
 * earlier answer to the same request left an ETag; a 304 is turned back into the 200 it
 * stands for (body and Link header from the cache), so pagination and parsing above never
 * see a difference. A 304 costs nothing against the rate limit, which is what makes polling
 * an unchanged repository free. The cache is a bounded LRU keyed by URL and Accept.
 * The wrapper also puts a timeout on every request, so a silent server cannot hold a tick.
 */

import { LruCache } from '../http/lru-cache.js';

/** One cached answer. */
interface CachedAnswer {
  etag: string;
  body: string;
  /** Response headers worth replaying (content type, Link). */
  headers: Record<string, string>;
}

/** Counters for tests and benchmarks. */
export interface ConditionalStats {
  /** Requests sent. */
  requests: number;
  /** Answers that were 304 and came from the cache. */
  notModified: number;
}

const REPLAYED_HEADERS = ['content-type', 'link'];

/** A `fetch` that makes GETs conditional over a cache of `cacheSize` entries and times out after `timeoutMs`. */
export function conditionalFetch(
  cacheSize: number,
  timeoutMs: number,
  base: typeof fetch = fetch,
): { fetch: typeof fetch; stats: ConditionalStats } {
  const cache = new LruCache<CachedAnswer>(cacheSize);
  const stats: ConditionalStats = { requests: 0, notModified: 0 };
  const wrapped = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const key = `${url} ${headers.get('accept') ?? ''}`;
    const cached = method === 'GET' && cacheSize > 0 ? cache.get(key) : undefined;
    if (cached !== undefined) headers.set('if-none-match', cached.etag);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    stats.requests += 1;
    const response = await base(url, { ...init, headers, signal });
    if (method !== 'GET' || cacheSize <= 0) return response;
    if (response.status === 304 && cached !== undefined) {
      stats.notModified += 1;
      const replay = new Headers(response.headers);
      for (const [name, value] of Object.entries(cached.headers)) replay.set(name, value);
      if (cached.headers.link === undefined) replay.delete('link');
      return new Response(cached.body, { status: 200, headers: replay });
    }
    const etag = response.headers.get('etag');
    if (response.status !== 200 || etag === null) return response;
    const body = await response.text();
    const kept: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    cache.set(key, { etag, body, headers: kept });
    return new Response(body, { status: 200, headers: response.headers });
  };
  return { fetch: wrapped as typeof fetch, stats };
}
