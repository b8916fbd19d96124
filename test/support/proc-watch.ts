/** Watching /proc for a secret while a test runs. */
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Every process's command line and environment, read repeatedly from the moment it is called:
 * where the secret shows up. This process and the `exempt` ones (a service given the secret by
 * its operator) are left out, and so are their children caught between fork and exec.
 */
export function watchSecret(
  token: string,
  options: { exempt?: () => number[]; intervalMs?: number } = {},
): { stop(): { leaks: string[]; scans: number } } {
  const leaks: string[] = [];
  let scans = 0;
  const scan = () => {
    scans += 1;
    const skip = new Set([process.pid, ...(options.exempt?.() ?? [])]);
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || skip.has(pid)) continue;
      for (const part of ['cmdline', 'environ']) {
        try {
          const text = readFileSync(`/proc/${pid}/${part}`, 'utf8');
          if (!text.includes(token)) continue;
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
          // A child of the service caught between fork and exec still shows the service's own
          // command line and environment; what it runs is seen once it has exec'd.
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          if (skip.has(ppid) && cmdline === readFileSync(`/proc/${ppid}/cmdline`, 'utf8')) continue;
          leaks.push(`${pid} (${cmdline.split('\0').join(' ').slice(0, 200)}) has it in its ${part}`);
        } catch {
          // Gone, or not ours to read.
        }
      }
    }
  };
  scan();
  const timer = setInterval(scan, options.intervalMs ?? 25);
  return {
    stop: () => {
      clearInterval(timer);
      return { leaks, scans };
    },
  };
}
