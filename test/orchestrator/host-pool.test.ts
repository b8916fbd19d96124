import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  HOST_DOWN_BASE_DELAY_MS,
  HOST_DOWN_MAX_DELAY_MS,
  HostPool,
} from '../../src/orchestrator/host-pool.js';

/** A pool on a hand-moved clock. */
function poolAt(hosts: readonly string[], cap: number, options: { baseMs?: number; maxMs?: number } = {}) {
  const clock = { now: 1_000_000 };
  const pool = new HostPool({
    nowMs: () => clock.now,
    ...(options.baseMs !== undefined ? { downBaseDelayMs: options.baseMs } : {}),
    ...(options.maxMs !== undefined ? { downMaxDelayMs: options.maxMs } : {}),
  });
  pool.configure(hosts, cap);
  return { pool, clock };
}

const hostOf = (pick: ReturnType<HostPool['pick']>): string | null => (pick.ok ? pick.host : null);

describe('host pool: picking', () => {
  it('ties go to the first host in configured order, not an arbitrary one', () => {
    const { pool } = poolAt(['a', 'b', 'c'], 2);
    expect(pool.pick(null)).toEqual({ ok: true, host: 'a' });
  });

  it('spreads sessions to the least-loaded host instead of filling the first', () => {
    const { pool } = poolAt(['a', 'b', 'c'], 0);
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const host = hostOf(pool.pick(null));
      if (host === null) throw new Error('no host');
      pool.take(host);
      order.push(host);
    }
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('picking does not take the slot: two picks without a take name the same host', () => {
    const { pool } = poolAt(['a', 'b'], 1);
    expect(hostOf(pool.pick(null))).toBe('a');
    expect(hostOf(pool.pick(null))).toBe('a');
    expect(pool.usage().get('a')).toBe(0);
  });

  it('a retry goes back to its previous host when that host still has room', () => {
    const { pool } = poolAt(['a', 'b'], 2);
    pool.take('b');
    expect(hostOf(pool.pick('b'))).toBe('b');
  });

  it('a retry whose previous host is full, down or removed gets the least-loaded other host', () => {
    const { pool } = poolAt(['a', 'b', 'c'], 1);
    pool.take('a');
    expect(hostOf(pool.pick('a'))).toBe('b');
    pool.markDown('b', 'connection refused');
    expect(hostOf(pool.pick('b'))).toBe('c');
    pool.configure(['c'], 1);
    expect(hostOf(pool.pick('a'))).toBe('c');
    expect(hostOf(pool.pick('nowhere'))).toBe('c');
  });

  it('every host at its cap is "at capacity", not a host over its cap', () => {
    const { pool } = poolAt(['a', 'b'], 1);
    pool.take('a');
    pool.take('b');
    expect(pool.pick(null)).toEqual({ ok: false, reason: 'ssh_hosts_at_capacity' });
    expect(pool.pick('a')).toEqual({ ok: false, reason: 'ssh_hosts_at_capacity' });
    expect(pool.hasCapacity()).toBe(false);
    pool.release('b');
    expect(pool.hasCapacity()).toBe(true);
    expect(hostOf(pool.pick(null))).toBe('b');
  });

  it('every host down is "down", not "at capacity" (waiting will not free a slot)', () => {
    const { pool } = poolAt(['a', 'b'], 3);
    pool.markDown('a', 'timeout');
    pool.markDown('b', 'auth failed');
    expect(pool.pick(null)).toEqual({ ok: false, reason: 'ssh_hosts_down' });
    expect(pool.hasCapacity()).toBe(false);
  });

  it('some hosts down and the rest full is "at capacity" (a release will free a slot)', () => {
    const { pool } = poolAt(['a', 'b'], 1);
    pool.markDown('a', 'timeout');
    pool.take('b');
    expect(pool.pick(null)).toEqual({ ok: false, reason: 'ssh_hosts_at_capacity' });
  });

  it('no host configured picks nothing', () => {
    const { pool } = poolAt([], 0);
    expect(pool.pick(null).ok).toBe(false);
    expect(pool.hasCapacity()).toBe(false);
    expect(pool.hosts()).toEqual([]);
  });

  it('a cap of 0 means no per-host cap, not "no sessions"', () => {
    const { pool } = poolAt(['a'], 0);
    for (let i = 0; i < 50; i++) pool.take('a');
    expect(hostOf(pool.pick(null))).toBe('a');
    expect(pool.status()[0]?.cap).toBe(0);
  });

  it('a host listed twice is one host, at its first position', () => {
    const { pool } = poolAt(['b', 'a', 'b'], 1);
    expect([...pool.usage().keys()]).toEqual(['b', 'a']);
    pool.take('b');
    expect(hostOf(pool.pick(null))).toBe('a');
    pool.take('a');
    expect(pool.hasCapacity()).toBe(false);
  });
});

describe('host pool: reconfiguration', () => {
  it('a removed host keeps its running sessions until released, and is never picked', () => {
    const { pool } = poolAt(['a', 'b'], 2);
    pool.take('a');
    pool.take('a');
    pool.configure(['b'], 2);
    expect([...pool.usage()]).toEqual([
      ['b', 0],
      ['a', 2],
    ]);
    expect(pool.status().find((s) => s.host === 'a')).toMatchObject({ running: 2, configured: false });
    expect(hostOf(pool.pick('a'))).toBe('b');
    pool.release('a');
    pool.release('a');
    expect([...pool.usage()]).toEqual([['b', 0]]);
  });

  it('a host removed and added back while busy is not handed more than its cap', () => {
    const { pool } = poolAt(['a', 'b'], 1);
    pool.take('a');
    pool.configure(['b'], 1);
    pool.configure(['a', 'b'], 1);
    expect(hostOf(pool.pick(null))).toBe('b');
    pool.take('b');
    expect(pool.pick(null)).toEqual({ ok: false, reason: 'ssh_hosts_at_capacity' });
  });

  it('lowering the cap below the running count stops new sessions without forgetting the old', () => {
    const { pool } = poolAt(['a'], 3);
    pool.take('a');
    pool.take('a');
    pool.configure(['a'], 1);
    expect(pool.pick(null)).toEqual({ ok: false, reason: 'ssh_hosts_at_capacity' });
    expect(pool.usage().get('a')).toBe(2);
    pool.release('a');
    expect(pool.hasCapacity()).toBe(false);
    pool.release('a');
    expect(hostOf(pool.pick(null))).toBe('a');
  });

  it('the new order decides ties after a reload', () => {
    const { pool } = poolAt(['a', 'b'], 0);
    pool.configure(['b', 'a'], 0);
    expect(hostOf(pool.pick(null))).toBe('b');
  });

  it('a negative or fractional cap is read as a whole number, never as a negative limit', () => {
    const { pool } = poolAt(['a'], -3);
    expect(pool.perHostCap()).toBe(0);
    pool.configure(['a'], 2.7);
    expect(pool.perHostCap()).toBe(2);
  });
});

describe('host pool: usage counts', () => {
  it('a release without a take does not go negative', () => {
    const { pool } = poolAt(['a'], 1);
    pool.release('a');
    pool.release('ghost');
    expect([...pool.usage()]).toEqual([['a', 0]]);
    pool.take('a');
    expect(pool.usage().get('a')).toBe(1);
  });

  it('usage lists every configured host, idle ones at 0, so a gauge sees them', () => {
    const { pool } = poolAt(['a', 'b', 'c'], 2);
    pool.take('b');
    expect([...pool.usage()]).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 0],
    ]);
  });

  it('usage is a copy: changing it does not change the pool', () => {
    const { pool } = poolAt(['a'], 1);
    pool.usage().set('a', 5);
    expect(pool.hasCapacity()).toBe(true);
  });
});

describe('host pool: hosts that fail', () => {
  it('a down host is skipped for 5 s, then eligible again', () => {
    const { pool, clock } = poolAt(['a', 'b'], 0);
    pool.markDown('a', 'connection refused');
    expect(hostOf(pool.pick(null))).toBe('b');
    expect(hostOf(pool.pick('a'))).toBe('b');
    clock.now += HOST_DOWN_BASE_DELAY_MS - 1;
    expect(hostOf(pool.pick(null))).toBe('b');
    clock.now += 1;
    expect(hostOf(pool.pick(null))).toBe('a');
  });

  it.each([
    [1, 5_000],
    [2, 10_000],
    [3, 20_000],
    [6, 160_000],
    [7, 300_000],
    [40, 300_000],
  ])('failure %i in a row waits %i ms (doubling, capped at 5 min)', (failures, waitMs) => {
    const { pool, clock } = poolAt(['a'], 0);
    for (let i = 1; i < failures; i++) {
      pool.markDown('a', `failure ${i}`);
      clock.now = pool.status()[0]!.down!.untilMs;
    }
    const before = clock.now;
    pool.markDown('a', 'last');
    expect(pool.status()[0]?.down).toEqual({ reason: 'last', untilMs: before + waitMs });
  });

  it('the default delays are 5 s and 5 min', () => {
    expect(HOST_DOWN_BASE_DELAY_MS).toBe(5_000);
    expect(HOST_DOWN_MAX_DELAY_MS).toBe(300_000);
  });

  it('the delays are constructor options', () => {
    const { pool, clock } = poolAt(['a'], 0, { baseMs: 100, maxMs: 250 });
    pool.markDown('a', 'x');
    expect(pool.status()[0]?.down?.untilMs).toBe(clock.now + 100);
    clock.now += 100;
    pool.markDown('a', 'x');
    expect(pool.status()[0]?.down?.untilMs).toBe(clock.now + 200);
    clock.now += 200;
    pool.markDown('a', 'x');
    expect(pool.status()[0]?.down?.untilMs).toBe(clock.now + 250);
  });

  it('failures reported during one wait are one outage: the wait neither doubles nor moves', () => {
    const { pool, clock } = poolAt(['a'], 0);
    pool.markDown('a', 'session 1 lost');
    const until = pool.status()[0]?.down?.untilMs;
    clock.now += 1_000;
    pool.markDown('a', 'session 2 lost');
    expect(pool.status()[0]?.down).toEqual({ reason: 'session 2 lost', untilMs: until });
  });

  it('after the wait the host is fully eligible again, not held to one session (a blip must not idle it)', () => {
    const { pool, clock } = poolAt(['a', 'b'], 3);
    pool.take('b');
    pool.markDown('a', 'timeout');
    clock.now += HOST_DOWN_BASE_DELAY_MS;
    expect(hostOf(pool.pick(null))).toBe('a');
    pool.take('a');
    expect(hostOf(pool.pick('a'))).toBe('a');
    pool.take('a');
    expect(hostOf(pool.pick('a'))).toBe('a');
  });

  it('a failed trial doubles the wait; a good one makes the host a full member again', () => {
    const { pool, clock } = poolAt(['a'], 0);
    pool.markDown('a', 'timeout');
    expect(pool.pick(null)).toEqual({ ok: false, reason: 'ssh_hosts_down' });
    clock.now += HOST_DOWN_BASE_DELAY_MS;
    pool.take('a');
    pool.markDown('a', 'timeout again');
    expect(pool.status()[0]?.down?.untilMs).toBe(clock.now + 2 * HOST_DOWN_BASE_DELAY_MS);
    clock.now += 2 * HOST_DOWN_BASE_DELAY_MS;
    pool.take('a');
    pool.markUp('a');
    expect(pool.status()[0]?.down).toBeNull();
    pool.take('a');
    expect(hostOf(pool.pick(null))).toBe('a');
    pool.markDown('a', 'fresh outage');
    expect(pool.status()[0]?.down?.untilMs).toBe(clock.now + HOST_DOWN_BASE_DELAY_MS);
  });

  it('a failed host stays listed with its failure until markUp, also once on trial', () => {
    const { pool, clock } = poolAt(['a'], 0);
    pool.markDown('a', 'refused');
    clock.now += HOST_DOWN_BASE_DELAY_MS;
    pool.take('a');
    expect(pool.status()[0]).toMatchObject({ running: 1, down: { reason: 'refused' }, configured: true });
  });

  it('a host removed from the workflow loses its failure record; one added back starts clean', () => {
    const { pool } = poolAt(['a', 'b'], 0);
    pool.markDown('a', 'refused');
    pool.configure(['b'], 0);
    pool.configure(['a', 'b'], 0);
    expect(hostOf(pool.pick(null))).toBe('a');
  });

  it('a down host that is full is still "down" in status and skipped', () => {
    const { pool } = poolAt(['a', 'b'], 1);
    pool.take('a');
    pool.markDown('a', 'lost');
    expect(hostOf(pool.pick(null))).toBe('b');
    expect(pool.status()).toEqual([
      {
        host: 'a',
        running: 1,
        cap: 1,
        down: { reason: 'lost', untilMs: expect.any(Number) },
        configured: true,
      },
      { host: 'b', running: 0, cap: 1, down: null, configured: true },
    ]);
  });
});

describe('host pool: clone', () => {
  it('a clone plans on its own: taking there leaves the original untouched', () => {
    const { pool } = poolAt(['a', 'b'], 1);
    pool.take('a');
    pool.markDown('b', 'x');
    const copy = pool.clone();
    copy.take('b');
    copy.markUp('b');
    copy.configure(['c'], 5);
    expect([...pool.usage()]).toEqual([
      ['a', 1],
      ['b', 0],
    ]);
    expect(pool.status()[1]?.down?.reason).toBe('x');
    expect(pool.perHostCap()).toBe(1);
  });
});

type Op =
  | { type: 'configure'; hosts: string[]; cap: number }
  | { type: 'dispatch'; preferred: string | null }
  | { type: 'release'; host: string }
  | { type: 'markDown'; host: string }
  | { type: 'markUp'; host: string }
  | { type: 'advance'; ms: number };

const HOSTS = ['a', 'b', 'c', 'd'];
const host = fc.constantFrom(...HOSTS);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc
      .record({ hosts: fc.subarray(HOSTS), cap: fc.integer({ min: 0, max: 4 }) })
      .map((r) => ({ type: 'configure' as const, ...r })),
  },
  {
    weight: 6,
    arbitrary: fc.option(host, { nil: null }).map((preferred) => ({ type: 'dispatch' as const, preferred })),
  },
  { weight: 4, arbitrary: host.map((h) => ({ type: 'release' as const, host: h })) },
  { weight: 1, arbitrary: host.map((h) => ({ type: 'markDown' as const, host: h })) },
  { weight: 1, arbitrary: host.map((h) => ({ type: 'markUp' as const, host: h })) },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 0, max: 20_000 }).map((ms) => ({ type: 'advance' as const, ms })),
  },
);

describe('host pool: properties', () => {
  it('a host picked for a session is configured, not waiting out a failure, and under its cap', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 120 }),
        fc.subarray(HOSTS),
        fc.integer({ min: 0, max: 3 }),
        (ops, hosts, cap) => {
          const clock = { now: 0 };
          const pool = new HostPool({ nowMs: () => clock.now });
          pool.configure(hosts, cap);
          for (const o of ops) {
            switch (o.type) {
              case 'configure':
                pool.configure(o.hosts, o.cap);
                break;
              case 'dispatch': {
                const before = pool.status();
                const picked = pool.pick(o.preferred);
                if (picked.ok) {
                  const s = before.find((x) => x.host === picked.host);
                  expect(s?.configured).toBe(true);
                  if (s?.down !== null && s?.down !== undefined)
                    expect(clock.now).toBeGreaterThanOrEqual(s.down.untilMs);
                  if (pool.perHostCap() > 0) expect(s!.running).toBeLessThan(pool.perHostCap());
                  expect(pool.hasCapacity()).toBe(true);
                  pool.take(picked.host);
                } else {
                  expect(pool.hasCapacity()).toBe(false);
                }
                break;
              }
              case 'release':
                pool.release(o.host);
                break;
              case 'markDown':
                pool.markDown(o.host, 'failed');
                break;
              case 'markUp':
                pool.markUp(o.host);
                break;
              case 'advance':
                clock.now += o.ms;
                break;
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('when the cap never changes and only picked hosts are taken, usage never exceeds the cap', () => {
    fc.assert(
      fc.property(
        fc.array(
          op.filter((o) => o.type !== 'configure'),
          { maxLength: 150 },
        ),
        fc.subarray(HOSTS, { minLength: 1 }),
        fc.integer({ min: 1, max: 3 }),
        (ops, hosts, cap) => {
          const clock = { now: 0 };
          const pool = new HostPool({ nowMs: () => clock.now });
          pool.configure(hosts, cap);
          for (const o of ops) {
            if (o.type === 'dispatch') {
              const picked = pool.pick(o.preferred);
              if (picked.ok) pool.take(picked.host);
            } else if (o.type === 'release') pool.release(o.host);
            else if (o.type === 'markDown') pool.markDown(o.host, 'failed');
            else if (o.type === 'markUp') pool.markUp(o.host);
            else if (o.type === 'advance') clock.now += o.ms;
            for (const [h, running] of pool.usage()) {
              expect(running, h).toBeLessThanOrEqual(cap);
              expect(running, h).toBeGreaterThanOrEqual(0);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('usage matches a simple count of takes and releases (never negative), for any host', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ take: fc.boolean(), host }), { maxLength: 200 }),
        fc.subarray(HOSTS),
        (ops, hosts) => {
          const pool = new HostPool({ nowMs: () => 0 });
          pool.configure(hosts, 2);
          const model = new Map<string, number>();
          for (const o of ops) {
            if (o.take) pool.take(o.host);
            else pool.release(o.host);
            model.set(o.host, Math.max(0, (model.get(o.host) ?? 0) + (o.take ? 1 : -1)));
          }
          const usage = pool.usage();
          for (const h of hosts) expect(usage.get(h)).toBe(model.get(h) ?? 0);
          for (const [h, n] of usage) if (!hosts.includes(h)) expect(n).toBe(model.get(h));
          for (const [h, n] of model) if (n > 0) expect(usage.get(h)).toBe(n);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the pick is the least-loaded available host, first in order on ties', () => {
    fc.assert(
      fc.property(fc.subarray(HOSTS, { minLength: 1 }), fc.array(host, { maxLength: 12 }), (hosts, takes) => {
        const pool = new HostPool({ nowMs: () => 0 });
        pool.configure(hosts, 0);
        for (const h of takes) pool.take(h);
        const picked = pool.pick(null);
        const usage = pool.usage();
        const least = Math.min(...hosts.map((h) => usage.get(h) ?? 0));
        expect(picked).toEqual({ ok: true, host: hosts.find((h) => usage.get(h) === least) });
      }),
    );
  });
});
