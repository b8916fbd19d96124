/**
 * One `worker.ssh_hosts` entry: `[user@]host[:port]`, with an IPv6 address in
 * brackets (`[::1]:2222`). Parsed in one place so validation and the SSH layer agree.
 */

export interface HostSpec {
  /** Login name, null for the default user. */
  user: string | null;
  /** Host name or address, without brackets. */
  host: string;
  /** TCP port, 22 unless given. */
  port: number;
}

export const DEFAULT_SSH_PORT = 22;

/** Parses one host entry; a value naming what is wrong, never a throw. */
export function parseHostSpec(spec: string): { ok: true; value: HostSpec } | { ok: false; message: string } {
  const text = spec.trim();
  const fail = (why: string) => ({ ok: false as const, message: `ssh host "${spec}": ${why}` });
  if (text === '') return fail('is empty');
  if (/\s/.test(text)) return fail('contains whitespace');
  const at = text.lastIndexOf('@');
  const user = at === -1 ? null : text.slice(0, at);
  if (user === '') return fail('has an empty user before "@"');
  if (user !== null && !/^[A-Za-z0-9._][A-Za-z0-9._-]*$/.test(user))
    return fail(`has an invalid user "${user}"`);
  const rest = text.slice(at + 1);
  let host: string;
  let portText: string | null = null;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close === -1) return fail('has "[" without "]"');
    host = rest.slice(1, close);
    const after = rest.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return fail(`has unexpected text "${after}" after "]"`);
      portText = after.slice(1);
    }
    if (!host.includes(':')) return fail('has brackets around something that is not an IPv6 address');
  } else {
    const colons = rest.split(':').length - 1;
    if (colons > 1) return fail('looks like an IPv6 address: write it in brackets, e.g. [::1]:22');
    const colon = rest.indexOf(':');
    host = colon === -1 ? rest : rest.slice(0, colon);
    if (colon !== -1) portText = rest.slice(colon + 1);
  }
  if (host === '') return fail('has no host name');
  // Never let a host name read as an option, wherever it may end up.
  if (host.startsWith('-')) return fail(`has a host name starting with "-": "${host}"`);
  if (!/^[A-Za-z0-9.:%_-]+$/.test(host)) return fail(`has an invalid host name "${host}"`);
  let port = DEFAULT_SSH_PORT;
  if (portText !== null) {
    if (!/^[0-9]{1,5}$/.test(portText)) return fail(`has an invalid port "${portText}"`);
    port = Number(portText);
    if (port < 1 || port > 65_535) return fail(`has a port outside 1-65535: ${port}`);
  }
  return { ok: true, value: { user, host, port } };
}
