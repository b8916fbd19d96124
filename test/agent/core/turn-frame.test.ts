/**
 * The core's one cleaning pass over events, for the rate-limit report: its names
 * become metric labels and dashboard text, its figures gauges and dates, so what
 * a runtime sends is made safe once here rather than in every adapter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { clearSecrets, registerSecrets } from '../../../src/agent/core/sanitize.js';
import { cleanEvent } from '../../../src/agent/core/turn-frame.js';
import type { AgentEvent, RateLimitWindow } from '../../../src/domain/agent.js';

afterEach(() => clearSecrets());

const base = { at: '2026-03-01T12:00:00.000Z', agentPid: '1' };
const window = (over: Partial<RateLimitWindow> = {}): RateLimitWindow => ({
  window: 'primary',
  usedPercent: 10,
  windowMinutes: 300,
  resetsAtMs: 1_800_000_000_000,
  ...over,
});

describe('cleanEvent: rate_limits', () => {
  it('names lose control characters and secrets and stay short; at most 8 windows; impossible figures become unknown', () => {
    registerSecrets(['sk-live-secret']);
    const event: AgentEvent = {
      ...base,
      type: 'rate_limits',
      limitId: `acct-sk-live-secret\u0007${'x'.repeat(200)}`,
      windows: [
        window({ window: 'five\nhour\u001b[31m' }),
        window({ usedPercent: Number.NaN, windowMinutes: -5, resetsAtMs: 9e20 }),
        ...Array.from({ length: 10 }, (_, i) => window({ window: `w${i}` })),
      ],
    };
    const cleaned = cleanEvent(event, '/ws');
    if (cleaned.type !== 'rate_limits') throw new Error('type changed');
    expect(cleaned.limitId.startsWith('acct-***\uFFFD')).toBe(true);
    expect(cleaned.limitId).not.toContain('sk-live-secret');
    expect(cleaned.limitId.length).toBeLessThan(100);
    expect(cleaned.windows).toHaveLength(8);
    expect(cleaned.windows[0]?.window).toBe('five\nhour\uFFFD[31m');
    expect(cleaned.windows[1]).toEqual({
      window: 'primary',
      usedPercent: null,
      windowMinutes: null,
      resetsAtMs: null,
    });
    expect(cleaned.windows[2]).toEqual(window({ window: 'w0' }));
  });
});
