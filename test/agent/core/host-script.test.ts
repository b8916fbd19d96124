import { describe, expect, it } from 'vitest';
import { runHostScript } from '../../../src/agent/core/host-script.js';
import type { RemoteHost } from '../../../src/domain/remote.js';

/** A host whose `run` answers `answer` (or throws it), recording what it was asked. */
function host(answer: unknown, throws = false): RemoteHost & { asked: unknown[] } {
  const asked: unknown[] = [];
  return {
    asked,
    run: async (request: unknown) => {
      asked.push(request);
      if (throws) throw answer;
      return answer;
    },
  } as unknown as RemoteHost & { asked: unknown[] };
}

const result = (over: Record<string, unknown>) => ({
  ok: true,
  result: { output: '  /home/u/.local/state/x\n', timedOut: false, exitCode: 0, signal: null, ...over },
});

describe('a preparation script on a host', () => {
  it('hands back the trimmed output, and runs with no working directory and a bounded output', async () => {
    const h = host(result({}));
    expect(await runHostScript(h, 'echo hi', { A: '1' }, 5_000)).toEqual({
      ok: true,
      output: '/home/u/.local/state/x',
    });
    expect(h.asked).toEqual([
      { script: 'echo hi', cwd: null, env: { A: '1' }, timeoutMs: 5_000, maxOutputBytes: 65_536 },
    ]);
  });

  it('turns each failure into one message: unreachable, a throw, a timeout, an exit with the output tail', async () => {
    expect(await runHostScript(host({ ok: false, message: 'host down' }), 's', {}, 10)).toEqual({
      ok: false,
      message: 'host down',
    });
    expect(await runHostScript(host(new Error('broken pipe'), true), 's', {}, 10)).toEqual({
      ok: false,
      message: 'broken pipe',
    });
    expect(await runHostScript(host(result({ timedOut: true, exitCode: null })), 's', {}, 30_000)).toEqual({
      ok: false,
      message: 'the script timed out after 30000 ms',
    });
    const long = `${'x'.repeat(5_000)}mkdir: permission denied`;
    const failed = await runHostScript(host(result({ exitCode: 3, output: long })), 's', {}, 10);
    expect(failed).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^the script ended with 3: x+mkdir: permission denied$/),
    });
    expect(failed.ok ? 0 : failed.message.length).toBe('the script ended with 3: '.length + 2_000);
    expect(
      await runHostScript(host(result({ exitCode: null, signal: 'SIGKILL' })), 's', {}, 10),
    ).toMatchObject({
      message: expect.stringContaining('ended with SIGKILL'),
    });
  });
});
