/** The SSH layer: remote hosts for the agent core and the workspace layer. */
export type { BackoffPolicy } from './backoff.js';
export type { HostKeyPolicy } from './host-keys.js';
export { SshHost, SshHosts, type SshOptions } from './hosts.js';
export { shellQuote } from './quote.js';
