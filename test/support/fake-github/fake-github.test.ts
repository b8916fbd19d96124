import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGithub, startFakeGithub } from './server.js';

let fake: FakeGithub;

beforeEach(async () => {
  fake = await startFakeGithub({ rateLimit: 10 });
});

afterEach(async () => {
  await fake.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${fake.url}${path}`, { headers: { authorization: `token ${fake.token}`, ...headers } });

describe('fake GitHub', () => {
  it('pages with a Link header, and a matching If-None-Match is a 304 that does not count', async () => {
    for (let i = 0; i < 5; i++) fake.addIssue({ title: `t${i}` });
    const first = await get('/repos/acme/widgets/issues?per_page=2&direction=asc');
    expect(((await first.json()) as { number: number }[]).map((i) => i.number)).toEqual([1, 2]);
    expect(first.headers.get('link')).toContain('page=2');
    expect(first.headers.get('link')).toContain('rel="next"');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('9');
    const etag = first.headers.get('etag') as string;
    const again = await get('/repos/acme/widgets/issues?per_page=2&direction=asc', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(fake.countedSince(0)).toBe(1);
  });

  it('a spent quota answers 403 with remaining 0 until the reset; bad credentials answer 401', async () => {
    fake.exhaustPrimary(60_000);
    const limited = await get('/repos/acme/widgets/issues');
    expect(limited.status).toBe(403);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBe(fake.rateLimitReset);
    expect((await get('/repos/acme/widgets/issues', { authorization: 'token wrong' })).status).toBe(401);
  });

  it('injected faults answer first: a secondary limit with Retry-After, then a 5xx', async () => {
    fake.secondaryLimit(1, 7);
    fake.failNext(1, 503);
    const secondary = await get('/repos/acme/widgets/issues');
    expect(secondary.status).toBe(403);
    expect(secondary.headers.get('retry-after')).toBe('7');
    expect(((await secondary.json()) as { message: string }).message).toMatch(/secondary rate limit/);
    expect((await get('/repos/acme/widgets/issues')).status).toBe(503);
    expect((await get('/repos/acme/widgets/issues')).status).toBe(200);
  });

  it('adding a label the repository lacks creates it, as the real API does', async () => {
    const n = fake.addIssue({ title: 't' });
    const r = await fetch(`${fake.url}/repos/acme/widgets/issues/${n}/labels`, {
      method: 'POST',
      headers: { authorization: `token ${fake.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ labels: ['Brand-New'] }),
    });
    expect(r.status).toBe(200);
    expect(fake.labels.get('brand-new')).toBe('Brand-New');
  });
});
