/**
 * The echo adapter: simulate mode. Runs the echo runtime script as a real
 * subprocess through the fork-per-turn skeleton; it writes the built-in stream,
 * so it shares the stream adapter with the mock kind.
 */
import { StreamRuntimeAdapter } from '../mock/stream-adapter.js';
import { echoTurnEnv } from './command.js';
import { type EchoConfig, echoBlock } from './config.js';
import { ECHO_USAGE_SOURCES } from './usage.js';

/** The adapter of the `echo` kind. */
export function createEchoAdapter(): StreamRuntimeAdapter<EchoConfig> {
  return new StreamRuntimeAdapter({
    kind: 'echo',
    block: echoBlock,
    sources: ECHO_USAGE_SOURCES,
    moduleUrl: import.meta.url,
    turnEnv: (config, ctx, _sessionId, base) => echoTurnEnv(config, ctx, base),
  });
}
