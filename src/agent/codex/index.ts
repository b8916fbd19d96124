/**
 * Registration of the `codex` kind: `codex app-server` (one long-lived process per
 * session, JSON-RPC over stdio), falling back to `codex exec --json` (one process
 * per turn) when the installed build has no app-server. Usage is the thread's
 * running total, settled once per turn; there is no cost field. Tool permissions:
 * `approval_policy` (default `never`) and `sandbox` pass through, and every
 * approval request the policy raises is declined at once, never left waiting.
 * Tool servers go into the managed home's config.toml (`tool-tables.ts`), their
 * secrets in Codex's environment only. Its sandbox is probed before the first issue (`sandbox.ts`).
 */
import { registerAgent } from '../registry.js';
import { createCodexAdapter } from './adapter.js';
import { CODEX_DEFAULT_COMMAND } from './command.js';
import { codexBlock } from './config.js';
import { CODEX_CREDENTIAL_ENV } from './home.js';
import { probeCodexSandbox } from './sandbox.js';
import { CODEX_USAGE_SOURCES } from './usage.js';

registerAgent('codex', {
  validateConfig: codexBlock.validate,
  runtime: {
    factory: createCodexAdapter,
    requiresCommand: true,
    defaultCommand: CODEX_DEFAULT_COMMAND,
    mcpDialect: 'toml-config',
    usageSources: CODEX_USAGE_SOURCES,
    credentialEnv: [...CODEX_CREDENTIAL_ENV],
    effortForwarding: 'forwarded',
    // Codex has no per-launch switch that drops its tools or replaces its system prompt; the
    // reduced session stops it reading AGENTS.md, and the managed CODEX_HOME holds no user
    // instructions.
    verificationContext: ['all_tools', 'system_prompt'],
    usageLimitRecognition: 'recognized',
    // `codex sandbox` runs a command the way sessions will: configured mode, managed home.
    sandbox: { kind: 'probe', probe: probeCodexSandbox },
  },
});
