/**
 * A small GraphQL client for Linear on the global `fetch`: one POST per request, the API key
 * as the raw `Authorization` value, a timeout on every attempt. It owns the two retry loops so
 * the adapter above only sees data or a TrackerError:
 *  - a rate limit (HTTP 429 or a `RATELIMITED` error) is waited out when the asked wait is
 *    within the bound, twice at most; beyond that it fails at once as a retryable
 *    tracker_api_error, so a tick is skipped rather than held;
 *  - a 5xx, a refused connection or a timeout is retried three times (n² × base apart) and
 *    then surfaces as tracker_transport_error.
 * Writes are retried too: a state change or a label is idempotent; a comment whose answer was
 * lost to a timeout may, rarely, be posted twice.
 */
import { TrackerError } from '../../domain/errors.js';
import {
  classifyGraphqlErrors,
  type GraphqlErrorEntry,
  graphqlFailure,
  graphqlSummary,
  httpFailure,
  payloadError,
  redactor,
  transportFailure,
} from './errors.js';
import { askedWaitMs, type HeaderReader, rateLimitWaitMs } from './rate-limit.js';

const REQUEST_TIMEOUT_MS = 30_000;
const TRANSPORT_RETRIES = 3;
const RATE_LIMIT_RETRIES = 2;
const DEFAULT_RETRY_BASE_MS = 1000;

/** Knobs of the client; production uses the defaults. */
export interface GraphqlClientOptions {
  /** Longest rate-limit wait honoured. */
  maxRateLimitWaitMs: number;
  /** Base of the backoff for 5xx and transport failures (n² × base). */
  retryBaseMs?: number;
  /** Per-attempt timeout. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** Counters for tests and benchmarks. */
export interface ClientStats {
  /** Requests sent, retries included. */
  requests: number;
  /** Rate-limit waits made. */
  rateLimitWaits: number;
}

type Attempt =
  | { type: 'data'; data: Record<string, unknown> }
  | { type: 'transport'; error: TrackerError }
  /** `detail`: what the answer said, for the error if the limit is not waited out. */
  | { type: 'rate_limited'; status: number; header: HeaderReader; detail: string }
  | { type: 'fail'; error: TrackerError };

/** One Linear GraphQL endpoint with one API key. */
export class GraphqlClient {
  readonly stats: ClientStats = { requests: 0, rateLimitWaits: 0 };
  private readonly redact: (text: string) => string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly timeoutMs: number;
  private readonly retryBaseMs: number;

  constructor(
    private readonly endpoint: string,
    private readonly token: string,
    private readonly options: GraphqlClientOptions,
  ) {
    this.redact = redactor(token);
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.retryBaseMs = options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS;
  }

  /** The `data` of a successful answer to `document`; any failure is a TrackerError (`what` names the operation). */
  async request(
    what: string,
    document: string,
    variables: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const body = JSON.stringify({ query: document, variables });
    let transportRetries = 0;
    let limitWaits = 0;
    for (;;) {
      const outcome = await this.attempt(what, body);
      switch (outcome.type) {
        case 'data':
          return outcome.data;
        case 'fail':
          throw outcome.error;
        case 'transport':
          if (transportRetries >= TRANSPORT_RETRIES) throw outcome.error;
          transportRetries += 1;
          await this.sleep(transportRetries * transportRetries * this.retryBaseMs);
          break;
        case 'rate_limited': {
          const waitMs = rateLimitWaitMs(outcome.status, outcome.header, limitWaits, {
            maxRetries: RATE_LIMIT_RETRIES,
            maxWaitMs: this.options.maxRateLimitWaitMs,
          });
          if (waitMs === null) throw this.limitError(what, outcome);
          limitWaits += 1;
          this.stats.rateLimitWaits += 1;
          await this.sleep(waitMs);
          break;
        }
      }
    }
  }

  private async attempt(what: string, body: string): Promise<Attempt> {
    this.stats.requests += 1;
    let status: number;
    let header: HeaderReader;
    let text: string;
    try {
      const response = await this.fetchImpl(this.endpoint, {
        method: 'POST',
        headers: {
          authorization: this.token,
          'content-type': 'application/json',
          accept: 'application/json',
          'user-agent': 'workflow-orchestrator',
        },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.status;
      header = (name) => response.headers.get(name);
      text = await response.text();
    } catch (error) {
      return { type: 'transport', error: transportFailure(error, what, this.timeoutMs) };
    }
    if (status >= 500) return { type: 'transport', error: httpFailure(status, what) };
    const json = parseJson(text);
    const errors = errorsOf(json);
    if (status === 429 || (errors !== null && classifyGraphqlErrors(errors) === 'rate_limited')) {
      const detail = errors === null ? String(status) : this.redact(graphqlSummary(errors));
      return { type: 'rate_limited', status, header, detail };
    }
    if (status === 401 || status === 403) return { type: 'fail', error: httpFailure(status, what) };
    if (errors !== null) return { type: 'fail', error: graphqlFailure(errors, what, this.redact) };
    if (status !== 200) return { type: 'fail', error: httpFailure(status, what) };
    if (json === undefined) return { type: 'fail', error: payloadError(what, 'the answer is not JSON') };
    const data = (json as { data?: unknown }).data;
    if (!isRecord(data)) return { type: 'fail', error: payloadError(what, 'the answer has no data') };
    return { type: 'data', data };
  }

  /** The retryable error of a limit not waited out, saying how far away its reset was. */
  private limitError(what: string, outcome: Extract<Attempt, { type: 'rate_limited' }>): TrackerError {
    const asked = askedWaitMs(outcome.header);
    const waitText =
      asked === null
        ? '; the answer gave no wait'
        : asked > this.options.maxRateLimitWaitMs
          ? `; it resets in ${Math.ceil(asked / 1000)} s, beyond linear.max_rate_limit_wait_ms`
          : '; still limited after the waits';
    return new TrackerError('tracker_api_error', `${what}: rate limited (${outcome.detail})${waitText}`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorsOf(json: unknown): GraphqlErrorEntry[] | null {
  if (!isRecord(json)) return null;
  const errors = json.errors;
  if (!Array.isArray(errors) || errors.length === 0) return null;
  return errors.map((e) => (isRecord(e) ? (e as GraphqlErrorEntry) : {}));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
