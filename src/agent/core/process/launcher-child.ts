/**
 * The program of the launcher process: a small Node process that starts agents for the service.
 * Node forks the whole parent to start a child, and for a service of 150 MB that blocks the
 * event loop several milliseconds per agent (more on a busy machine); forked from this small
 * process instead, the start costs the service nothing but a message. Each agent's pipes are
 * handed to the service over the IPC channel, so its output never passes through here.
 *
 * It is plain CommonJS source run with `node -e`, not a module of this package: a file would
 * need a build step of its own, and a function's `toString()` carries whatever helpers the
 * bundler adds. test/agent/core/process/launcher.test.ts runs it. Messages: see launcher.ts.
 *
 * - The pipes are handed over in the same turn of the loop as the spawn, each with its reading
 *   stopped first: Node starts reading a child's pipe at once, and bytes read here before the
 *   handle reaches the service would be lost (Node drops them once a handle is being sent).
 * - The niceness is set right after the spawn, before the agent can start anything.
 * - When the service goes away the launcher ends; the agents are left to the service's next
 *   start, which finds them by their owner tag.
 * - It shares the service's process group, so a Ctrl-C at a terminal, or a supervisor's SIGTERM
 *   to the group, reaches it too: it ignores them and ends with the service, after the service's
 *   graceful shutdown has seen its agents' exits.
 */
export const LAUNCHER_SCRIPT = `
'use strict';
const { spawn } = require('node:child_process');
const os = require('node:os');
function send(message, handle) {
  try { process.send(message, handle); } catch {}
}
function handOver(stream) {
  if (stream && stream._handle && typeof stream._handle.readStop === 'function') stream._handle.readStop();
  return stream;
}
process.on('message', (m) => {
  if (!m || m.type !== 'start') return;
  let child;
  try {
    child = spawn(m.command, m.args, {
      cwd: m.cwd, env: m.env, detached: true, stdio: [m.stdin, 'pipe', 'pipe'], windowsHide: true,
    });
  } catch (error) {
    send({ type: 'failed', id: m.id, code: (error && error.code) || null, message: String((error && error.message) || error) });
    return;
  }
  child.on('error', (error) => {
    if (child.pid === undefined) send({ type: 'failed', id: m.id, code: error.code || null, message: error.message });
  });
  if (child.pid === undefined) return;
  if (m.niceness > 0) {
    try { os.setPriority(child.pid, Math.min(19, os.getPriority(0) + m.niceness)); } catch {}
  }
  send({ type: 'started', id: m.id, pid: child.pid });
  if (child.stdin) send({ type: 'stdio', id: m.id, fd: 0 }, handOver(child.stdin));
  send({ type: 'stdio', id: m.id, fd: 1 }, handOver(child.stdout));
  send({ type: 'stdio', id: m.id, fd: 2 }, handOver(child.stderr));
  child.on('exit', (exitCode, signal) => send({ type: 'exit', id: m.id, exitCode, signal }));
});
process.on('disconnect', () => process.exit(0));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
send({ type: 'ready' });
`;
