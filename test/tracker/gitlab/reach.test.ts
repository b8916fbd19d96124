import { describe, expect, it } from 'vitest';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import '../../../src/tracker/kinds.js';
import { startFakeGitlab } from '../../support/fake-gitlab/server.js';

/** The registered kind's reach, as a dry run asks it. */
const reachGitlab = (endpoint: string, timeoutMs: number) =>
  (trackerKind('gitlab')?.reach as NonNullable<ReturnType<typeof trackerKind>>['reach'])?.(
    { kind: 'gitlab', endpoint } as TrackerSettings,
    timeoutMs,
  );

describe('reach (dry run)', () => {
  it('an instance that answers is reachable, and no token travels with the probe', async () => {
    const fake = await startFakeGitlab();
    try {
      expect(await reachGitlab(fake.url, 1000)).toEqual({ ok: true });
      expect(fake.requests[0]?.headers['private-token']).toBeUndefined();
    } finally {
      await fake.close();
    }
  });

  it('a closed port is reported at once as "connection refused"', async () => {
    const fake = await startFakeGitlab();
    const url = fake.url;
    await fake.close();
    const started = Date.now();
    expect(await reachGitlab(url, 10_000)).toEqual({ ok: false, address: url, reason: 'connection refused' });
    // Far short of the probe's own limit: refused, not timed out.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
