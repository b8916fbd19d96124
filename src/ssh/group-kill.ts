/**
 * Signals a remote process group from a separate channel. Channel signals are no
 * substitute: sshd refuses them for root logins ("session signalling requires privilege
 * separation") and they reach only the direct child, never its children. A `kill` to
 * `-PGID` run as the same user reaches the whole group, whoever logged in. The form is
 * `kill -NAME -PGID`: dash's `kill` rejects `--` ("Illegal number"), bash takes both.
 */
import type { HostConnections } from './connection.js';
import { shellQuote } from './quote.js';

const POLL_INTERVAL_MS = 100;
/** Extra time a control channel may take beyond its own grace before it is abandoned. */
const CONTROL_SLACK_MS = 10_000;

/**
 * True while any process of group `$1` is alive; zombies do not count where /proc
 * exists, because an orphan nobody reaps would otherwise look alive for ever.
 */
const GROUP_ALIVE = [
  'alive() {',
  '  kill -0 "-$1" 2>/dev/null || return 1',
  '  [ -r /proc/self/stat ] || return 0',
  '  for f in /proc/[0-9]*/stat; do',
  '    { IFS= read -r s < "$f"; } 2>/dev/null || continue',
  '    s=${s##*") "}',
  '    set -f; set -- $s; set +f',
  '    [ "$3" = "$P" ] && [ "$1" != Z ] && return 0',
  '  done',
  '  return 1',
  '}',
].join('\n');

/** SIGTERM and SIGCONT to the group, polls until it is gone or `graceMs` passed, then SIGKILL. */
export function terminateGroupScript(pgid: number, graceMs: number): string {
  const polls = Math.max(0, Math.ceil(graceMs / POLL_INTERVAL_MS));
  return [
    `P=${pgid}`,
    GROUP_ALIVE,
    'kill -TERM "-$P" 2>/dev/null || exit 0',
    'kill -CONT "-$P" 2>/dev/null',
    'i=0',
    'while alive "$P"; do',
    `  if [ "$i" -ge ${polls} ]; then kill -KILL "-$P" 2>/dev/null; exit 0; fi`,
    '  sleep 0.1 2>/dev/null || sleep 1',
    '  i=$((i + 1))',
    'done',
    'exit 0',
  ].join('\n');
}

/** SIGKILL to the group; a group already gone is not an error. */
export function killGroupScript(pgid: number): string {
  return `kill -KILL -${pgid} 2>/dev/null; exit 0`;
}

/**
 * Runs a control script on a fresh channel and waits for it (bounded); never rejects,
 * and an unreachable host is not an error (the wrapper's watcher covers a lost connection).
 */
export async function runControl(
  connections: HostConnections,
  script: string,
  boundMs: number,
): Promise<void> {
  const opened = await connections.exec(`exec /bin/sh -c ${shellQuote(script)}`);
  if (!opened.ok) return;
  const { channel } = opened;
  channel.on('error', () => {});
  channel.resume();
  channel.stderr.resume();
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      channel.close();
      resolve();
    }, boundMs + CONTROL_SLACK_MS);
    channel.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    channel.end();
  });
}

/** Sends SIGTERM to the group, then SIGKILL after `graceMs` if any of it lives; resolves when done. */
export function terminateRemoteGroup(
  connections: HostConnections,
  pgid: number,
  graceMs: number,
): Promise<void> {
  return runControl(connections, terminateGroupScript(pgid, graceMs), graceMs);
}

/** SIGKILL to the whole remote group; resolves once sent (or the host is unreachable). */
export function killRemoteGroup(connections: HostConnections, pgid: number): Promise<void> {
  return runControl(connections, killGroupScript(pgid), 0);
}
