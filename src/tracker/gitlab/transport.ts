/**
 * Every HTTP request of the GitLab tracker goes through here, below the API client. The
 * client's own request handler retries 429 and 502 ten times within milliseconds and reads
 * no Retry-After, which would hammer a rate-limited instance; so the client is given this
 * transport instead, which owns the policy:
 *  - every GET is conditional: an answer that left an ETag is replayed from a bounded LRU
 *    when the server says 304, so an unchanged poll transfers no issue bodies;
 *  - a 429 is waited out by its Retry-After (or RateLimit-Reset) within a bound, at most
 *    twice, else it fails as a retryable tracker_api_error;
 *  - a 5xx, a refused connection or a timeout is tried again twice with a short doubling
 *    backoff, then fails as tracker_transport_error;
 *  - any other failure is classified at once by its status (errors.ts).
 * The token travels only in the PRIVATE-TOKEN header and is scrubbed from every message.
 */
import { TrackerError } from '../../domain/errors.js';
import { LruCache } from '../http/lru-cache.js';
import { rateLimitRetryMs } from '../http/retry-after.js';
import { apiMessage, payloadError, redact, statusError, transportError } from './errors.js';

/** An answer as the client reads it: lowercased headers and the parsed JSON body (null when empty). */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** One request, already addressed and authorised. */
export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Counters for tests and benchmarks. */
export interface TransportStats {
  /** Requests sent, retries included. */
  requests: number;
  /** GETs answered 304 and served from the cache. */
  notModified: number;
}

export interface TransportOptions {
  /** Secret to scrub from every message. */
  token: string;
  /** Entries of the ETag cache; 0 sends no conditional requests. */
  etagCacheSize: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Longest rate-limit wait honoured. */
  maxRateLimitWaitMs: number;
  /** First backoff after a 5xx or transport failure. */
  retryBackoffMs: number;
  fetch?: typeof fetch;
}

/** 429 waits per request. */
const MAX_RATE_LIMIT_RETRIES = 2;
/** Retries per request after a 5xx or transport failure. */
const MAX_TRANSIENT_RETRIES = 2;
/** Headers a 304 replay restores, so paging above sees the original answer. */
const REPLAYED_HEADERS = ['content-type', 'link', 'x-next-page', 'x-page', 'x-total', 'x-total-pages'];

interface CachedAnswer {
  etag: string;
  body: unknown;
  headers: Record<string, string>;
}

/** Sends requests with the policy above. */
export class GitlabTransport {
  readonly stats: TransportStats = { requests: 0, notModified: 0 };
  private readonly cache: LruCache<CachedAnswer>;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: TransportOptions) {
    this.cache = new LruCache(options.etagCacheSize);
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The answer to `request`, or a TrackerError naming `request` by method and path. */
  async send(request: HttpRequest): Promise<HttpAnswer> {
    const what = `${request.method} ${new URL(request.url).pathname}`;
    const conditional = request.method === 'GET' && this.options.etagCacheSize > 0;
    let rateLimited = 0;
    let transient = 0;
    for (;;) {
      const cached = conditional ? this.cache.get(request.url) : undefined;
      const headers = { ...request.headers, ...(cached ? { 'if-none-match': cached.etag } : {}) };
      let response: Response;
      this.stats.requests += 1;
      try {
        response = await this.fetchImpl(request.url, {
          method: request.method,
          headers,
          ...(request.body === undefined ? {} : { body: request.body }),
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
      } catch (error) {
        if (transient < MAX_TRANSIENT_RETRIES) {
          await sleep(this.options.retryBackoffMs * 2 ** transient++);
          continue;
        }
        throw this.scrub(transportError(what, error));
      }
      const answerHeaders = headerRecord(response.headers);
      if (response.status === 304 && cached !== undefined) {
        await response.body?.cancel();
        this.stats.notModified += 1;
        return { status: 200, headers: { ...answerHeaders, ...cached.headers }, body: cached.body };
      }
      if (response.status === 429) {
        await response.body?.cancel();
        const retryAfter = retryAfterOf(answerHeaders);
        const waitMs = rateLimitRetryMs({ status: 429, retryAfter }, rateLimited, {
          maxRetries: MAX_RATE_LIMIT_RETRIES,
          maxWaitMs: this.options.maxRateLimitWaitMs,
        });
        if (waitMs !== null) {
          rateLimited += 1;
          await sleep(waitMs);
          continue;
        }
        const extra = retryAfter === null ? '' : `; retry after ${retryAfter} s`;
        throw this.scrub(statusError(429, what, '', extra));
      }
      if (response.status >= 500) {
        await response.body?.cancel();
        if (transient < MAX_TRANSIENT_RETRIES) {
          await sleep(this.options.retryBackoffMs * 2 ** transient++);
          continue;
        }
        throw this.scrub(statusError(response.status, what, ''));
      }
      const body = await readJson(response, what);
      if (response.status < 200 || response.status >= 300) {
        throw this.scrub(statusError(response.status, what, apiMessage(body)));
      }
      const etag = answerHeaders.etag;
      if (conditional && response.status === 200 && etag !== undefined) {
        const kept: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = answerHeaders[name];
          if (value !== undefined) kept[name] = value;
        }
        this.cache.set(request.url, { etag, body, headers: kept });
      }
      return { status: response.status, headers: answerHeaders, body };
    }
  }

  private scrub(error: TrackerError): TrackerError {
    const inner = error.message.replace(`tracker: ${error.kind}: `, '');
    return new TrackerError(error.kind, redact(inner, this.options.token));
  }
}

/** The wait a 429 asks for: Retry-After, else seconds until RateLimit-Reset (epoch seconds). */
export function retryAfterOf(headers: Record<string, string>, nowMs = Date.now()): string | null {
  const retryAfter = headers['retry-after'];
  if (retryAfter !== undefined && retryAfter.trim() !== '') return retryAfter.trim();
  const reset = Number(headers['ratelimit-reset']);
  if (!Number.isFinite(reset) || reset <= 0) return null;
  return String(Math.max(0, Math.ceil(reset - nowMs / 1000)));
}

async function readJson(response: Response, what: string): Promise<unknown> {
  const text = await response.text();
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    if (response.ok) throw payloadError(what, 'the body is not JSON');
    return { message: text.slice(0, 200) };
  }
}

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
