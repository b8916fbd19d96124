/** Loopback ports for tests that start servers. */
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The lowest port tests pick from; below it sit the well-known and registered services. */
const LOWEST_TEST_PORT = 20_000;

/**
 * A TCP port on 127.0.0.1 that was free a moment ago. It is taken from below the kernel's
 * ephemeral range where there is room: a test usually hands the port to a service that binds
 * it seconds later, and in between any outgoing connection on the machine (another test run's,
 * say) could be given an ephemeral port as its local end, and then the service could not bind.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralStart();
  if (below !== null && below - LOWEST_TEST_PORT >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = LOWEST_TEST_PORT + Math.floor(Math.random() * (below - LOWEST_TEST_PORT));
      if (await bindable(port)) return port;
    }
  }
  return listenOnce(0);
}

/** The first port of the kernel's ephemeral range, or null where it cannot be read. */
export function ephemeralStart(): number | null {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > 0 ? first : null;
  } catch {
    return null;
  }
}

async function bindable(port: number): Promise<boolean> {
  try {
    return (await listenOnce(port)) === port;
  } catch {
    return false;
  }
}

/** Listens on `port` (0: the OS picks), closes again, and returns the port it had. */
function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(port, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}
