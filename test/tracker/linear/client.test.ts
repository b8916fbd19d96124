import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectTrackerError } from '../../../internal-contracts/tracker/conformance.js';
import { TrackerError } from '../../../src/domain/errors.js';
import { GraphqlClient } from '../../../src/tracker/linear/client.js';
import { type FakeLinear, startFakeLinear } from '../../support/fake-linear/server.js';
import { trackerOver } from './helpers.js';

let fake: FakeLinear;

beforeEach(async () => {
  fake = await startFakeLinear();
  fake.addIssue({ title: 'one', state: 'Todo' });
});

afterEach(async () => {
  await fake.close();
});

async function failure(promise: Promise<unknown>): Promise<TrackerError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TrackerError);
  return error as TrackerError;
}

const statuses = () => fake.requests.map((r) => r.status);

describe('credentials', () => {
  it('the key goes raw in Authorization; the same key behind "Bearer" is refused', async () => {
    expect(await trackerOver(fake).tracker.fetchCandidateIssues()).toHaveLength(1);
    expect(fake.requests.map((r) => r.key)).toEqual(['raw']);
    const bearer: typeof fetch = (input, init) =>
      fetch(input, {
        ...init,
        headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${fake.token}` },
      });
    await expectTrackerError(
      trackerOver(fake, { fetch: bearer }).tracker.fetchCandidateIssues(),
      'tracker_auth_error',
    );
  });

  it('a key Linear refuses is tracker_auth_error at once, and no error message holds the key', async () => {
    const key = 'lin_api_WRONG_9f8e7d6c5b4a';
    const refused = await failure(
      trackerOver(fake, { settings: { apiKey: key } }).tracker.fetchCandidateIssues(),
    );
    expect(refused.kind).toBe('tracker_auth_error');
    expect(statuses()).toEqual([400]);
    expect(refused.message).not.toContain(key);
    // Even a server that echoes the key back cannot put it in a message.
    fake.failNext(1, 400, { message: `key ${fake.token} is revoked` });
    const echoed = await failure(trackerOver(fake).tracker.fetchCandidateIssues());
    expect(echoed.message).not.toContain(fake.token);
    fake.failNext(1, 401, { message: `key ${fake.token} is revoked` });
    const unauthorised = await failure(trackerOver(fake).tracker.fetchIssueById('ENG-1'));
    expect(unauthorised.kind).toBe('tracker_auth_error');
    expect(`${unauthorised.message} ${String(unauthorised.cause)}`).not.toContain(fake.token);
  });
});

describe('server and transport failures', () => {
  it('a 5xx is retried with backoff and the read completes', async () => {
    fake.failNext(2, 502);
    expect(await trackerOver(fake).tracker.fetchCandidateIssues()).toHaveLength(1);
    expect(statuses()).toEqual([502, 502, 200]);
  });

  it('a 5xx past three retries is tracker_transport_error after four requests', async () => {
    fake.failNext(10, 503);
    await expectTrackerError(trackerOver(fake).tracker.fetchCandidateIssues(), 'tracker_transport_error');
    expect(statuses()).toEqual([503, 503, 503, 503]);
  });

  it('the backoff between retries grows with the base the tracker was given', async () => {
    fake.failNext(3, 500);
    await trackerOver(fake, { retryBaseMs: 40 }).tracker.fetchCandidateIssues();
    const at = fake.requests.map((r) => r.at);
    // n² × base: 40, 160, 360 ms.
    expect((at[3] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(500);
  });

  it('an endpoint that refuses connections is tracker_transport_error', async () => {
    const { tracker } = trackerOver(fake);
    await fake.close();
    const error = await failure(tracker.fetchCandidateIssues());
    expect(error.kind).toBe('tracker_transport_error');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('no answer within the timeout is tracker_transport_error, retried like a 5xx', async () => {
    fake.hangNext(10);
    const started = Date.now();
    const error = await failure(trackerOver(fake, { timeoutMs: 150 }).tracker.fetchCandidateIssues());
    expect(error.kind).toBe('tracker_transport_error');
    expect(error.message).toContain('no answer within 0.15 s');
    expect(fake.requests.filter((r) => r.fault === 'hang')).toHaveLength(4);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a 200 that is not JSON, or JSON without data, is tracker_payload_error', async () => {
    const html: typeof fetch = async () => new Response('<html>maintenance</html>', { status: 200 });
    await expectTrackerError(
      trackerOver(fake, { fetch: html }).tracker.fetchCandidateIssues(),
      'tracker_payload_error',
    );
    const empty: typeof fetch = async () => Response.json({ data: null }, { status: 200 });
    await expectTrackerError(
      trackerOver(fake, { fetch: empty }).tracker.fetchCandidateIssues(),
      'tracker_payload_error',
    );
  });
});

describe('rate limits', () => {
  it('a RATELIMITED error with only a requests reset header is waited out until that reset', async () => {
    fake.rateLimitNext(1, 1_200);
    const started = Date.now();
    const { tracker } = trackerOver(fake);
    expect(await tracker.fetchCandidateIssues()).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(statuses()).toEqual([400, 200]);
    expect(tracker.stats.rateLimitWaits).toBe(1);
  });

  it('a spent complexity budget is waited out the same way', async () => {
    fake.rateLimitNext(1, 800, { budget: 'complexity' });
    const started = Date.now();
    expect(await trackerOver(fake).tracker.fetchCandidateIssues()).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it('a reset beyond linear.max_rate_limit_wait_ms fails at once as a retryable tracker_api_error', async () => {
    fake.rateLimitNext(5, 3_600_000);
    const started = Date.now();
    const error = await failure(trackerOver(fake).tracker.fetchCandidateIssues());
    expect(error.kind).toBe('tracker_api_error');
    expect(error.message).toContain('linear.max_rate_limit_wait_ms');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(statuses()).toEqual([400]);
  });

  it('a request is waited for twice at most, then fails as tracker_api_error', async () => {
    fake.rateLimitNext(5, 100);
    await expectTrackerError(trackerOver(fake).tracker.fetchCandidateIssues(), 'tracker_api_error');
    expect(statuses()).toEqual([400, 400, 400]);
  });

  it('with max_rate_limit_wait_ms 0 a rate limit is never waited out', async () => {
    fake.failNext(1, 429, { retryAfterS: 1 });
    const { tracker } = trackerOver(fake, { block: { max_rate_limit_wait_ms: 0 } });
    await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_api_error');
    expect(statuses()).toEqual([429]);
  });
});

describe('the fake validates documents as Linear would', () => {
  const client = () =>
    new GraphqlClient(fake.endpoint, fake.token, { maxRateLimitWaitMs: 0, retryBaseMs: 1 });

  it('an unknown field is a 400 and a tracker_payload_error', async () => {
    const error = await failure(client().request('probe', 'query { issues { nodes { id nope } } }', {}));
    expect(error.kind).toBe('tracker_payload_error');
    expect(error.message).toContain('GRAPHQL_VALIDATION_FAILED');
    expect(statuses()).toEqual([400]);
  });

  it('a variable of the wrong type ([String!]! where Linear wants [ID!]) is refused', async () => {
    const query = 'query Q($ids: [String!]!) { issues(filter: { id: { in: $ids } }) { nodes { id } } }';
    const error = await failure(client().request('probe', query, { ids: ['x'] }));
    expect(error.kind).toBe('tracker_payload_error');
    expect(error.message).toMatch(/\[String!\]!.*\[ID!\]/);
  });

  it('an unknown issue is a 200 whose error says "Entity not found", read as tracker_not_found', async () => {
    await expectTrackerError(trackerOver(fake).tracker.fetchIssueById('ENG-404'), 'tracker_not_found');
    expect(statuses()).toEqual([200]);
  });
});
