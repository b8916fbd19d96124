import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ephemeralStart, freePort } from './ports.js';

describe('freePort', () => {
  it('picks a port below the ephemeral range, which no outgoing connection can take meanwhile', async () => {
    const start = ephemeralStart();
    // Linux, as in CI: the range is readable.
    expect(start).not.toBeNull();
    if (start === null) return;
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(start);
    }
  });

  it('the port it gives can be bound', async () => {
    const port = await freePort();
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
