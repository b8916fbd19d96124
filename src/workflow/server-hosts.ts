/**
 * Which addresses and host names the HTTP server treats as safe. The API has no
 * authentication yet, so binding anything but loopback exposes it to the network, and a
 * server that answers any Host header can be reached from a web page through a DNS name
 * rebound to its address. Shared by config validation and the server so both agree.
 */
import net from 'node:net';

/** True for a bind address only this machine can reach. */
export function isLoopbackAddress(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * One `server.allowed_hosts` entry as the server compares it: lower case, no trailing dot,
 * an IPv6 address without brackets. A host name or an IP address; never a port or a wildcard.
 */
export function parseAllowedHost(entry: string): { ok: true; name: string } | { ok: false; message: string } {
  const name = entry
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (net.isIP(name) !== 0 || HOST_NAME.test(name)) return { ok: true, name };
  const hint = /:\d+$/.test(name)
    ? ': write the host name without a port'
    : ': expected a host name or an IP address';
  return { ok: false, message: `"${entry}" is not a host name${hint}` };
}
