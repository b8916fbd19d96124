/**
 * A small typed client for the few Jira REST v3 endpoints this tracker calls, on `fetch`.
 * It owns everything between "send this" and "here is the JSON": the Authorization header,
 * a per-request timeout, waiting out a 429 within its bound, retrying 5xx and connection
 * failures with a short bounded backoff, and turning every other answer into a TrackerError
 * of the right kind. The credential lives only in the header it builds: it is scrubbed from
 * every error, and no request object is ever attached to one, so it cannot reach a log.
 */
import { rateLimitRetryMs } from '../http/retry-after.js';
import type { JiraTrackerConfig } from './config.js';
import { payloadError, scrub, statusError, transportError } from './errors.js';

const REQUEST_TIMEOUT_MS = 30_000;
/** Rate-limit waits one request may make before its 429 is the answer. */
const MAX_RATE_LIMIT_RETRIES = 2;
/** Attempts for a request that meets a 5xx or no answer at all. */
const MAX_TRANSPORT_ATTEMPTS = 3;
const MAX_BACKOFF_MS = 10_000;

/** Test and embedding knobs; production uses the defaults. */
export interface JiraClientOptions {
  /** Base of the backoff between attempts after a 5xx or a connection failure (base, 2 × base, …). */
  retryBaseMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** One call: method, path under the site (`/rest/api/3/…`), query, JSON body, and what it is for messages. */
export interface JiraCall {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Names the operation in error messages ("fetch issue 10001"). */
  what: string;
}

/** The JSON answer of a successful call; null for 204 No Content. */
export type JiraAnswer = unknown;

/** Sends calls to one site with one credential. */
export class JiraClient {
  /** Requests sent, attempts included (tests and benchmarks read it). */
  requests = 0;
  private readonly authorization: string;
  private readonly secrets: string[];
  private readonly retryBaseMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly config: Pick<
      JiraTrackerConfig,
      'endpoint' | 'auth' | 'email' | 'token' | 'maxRateLimitWaitMs'
    >,
    options: JiraClientOptions = {},
  ) {
    const basic = Buffer.from(`${config.email}:${config.token}`).toString('base64');
    this.authorization = config.auth === 'bearer' ? `Bearer ${config.token}` : `Basic ${basic}`;
    this.secrets = [config.token, basic];
    this.retryBaseMs = options.retryBaseMs ?? 1000;
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Sends `call`, waiting and retrying within bounds; resolves to the parsed JSON or rejects with a TrackerError. */
  async send(call: JiraCall): Promise<JiraAnswer> {
    try {
      return await this.attempts(call);
    } catch (error) {
      throw scrub(error, this.secrets);
    }
  }

  private async attempts(call: JiraCall): Promise<JiraAnswer> {
    const url = this.url(call);
    let rateLimited = 0;
    let failed = 0;
    for (;;) {
      let response: Response;
      try {
        this.requests += 1;
        response = await this.fetchImpl(url, {
          method: call.method,
          headers: {
            authorization: this.authorization,
            accept: 'application/json',
            'user-agent': 'workflow-orchestrator',
            ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: call.body === undefined ? null : JSON.stringify(call.body),
          // A redirect is refused rather than followed with the credential to wherever it points.
          redirect: 'error',
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        failed += 1;
        if (failed >= MAX_TRANSPORT_ATTEMPTS) throw transportError(error, call.what);
        await this.sleep(this.backoffMs(failed));
        continue;
      }
      if (response.ok) return this.parse(response, call.what);

      const retryAfter = response.headers.get('retry-after');
      const body = await readJson(response);
      if (response.status === 429) {
        const waitMs = rateLimitRetryMs({ status: 429, retryAfter }, rateLimited, {
          maxRetries: MAX_RATE_LIMIT_RETRIES,
          maxWaitMs: this.config.maxRateLimitWaitMs,
        });
        if (waitMs !== null) {
          rateLimited += 1;
          await this.sleep(waitMs);
          continue;
        }
      } else if (response.status >= 500) {
        failed += 1;
        if (failed < MAX_TRANSPORT_ATTEMPTS) {
          await this.sleep(this.backoffMs(failed));
          continue;
        }
      }
      throw statusError(response.status, body, call.what, retryAfter);
    }
  }

  private url(call: JiraCall): string {
    const url = new URL(`${this.config.endpoint}${call.path}`);
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.href;
  }

  private backoffMs(failures: number): number {
    return Math.min(MAX_BACKOFF_MS, this.retryBaseMs * 2 ** (failures - 1));
  }

  private async parse(response: Response, what: string): Promise<JiraAnswer> {
    const text = await response.text().catch((error: unknown) => {
      throw transportError(error, what);
    });
    if (response.status === 204 || text.trim() === '') return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw payloadError(what, `the answer is not JSON (${text.length} bytes)`);
    }
  }
}

async function readJson(response: Response): Promise<unknown> {
  try {
    const text = await response.text();
    return text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}
