/**
 * Registration of the `opencode` kind: OpenCode's `run --format json`, one process
 * per turn, with usage read from every step's `step_finish` while the turn runs
 * (tokens per model call, cached and reasoning tokens apart, and OpenCode's own
 * price when it has one). Tool posture: the block's permission rules (by default
 * the shell and edits allowed, work outside the workspace refused); a rule that
 * would ask a person is refused by validate; the tools of the orchestrator's tool server,
 * given in the inline config's `mcp` section, are allowed on top of them. Sessions
 * continue with `--session`.
 */
import { registerAgent } from '../registry.js';
import { createOpencodeAdapter } from './adapter.js';
import { OPENCODE_CREDENTIAL_ENV, OPENCODE_DEFAULT_COMMAND, OPENCODE_SWITCHES } from './command.js';
import { opencodeBlock } from './config.js';
import { OPENCODE_USAGE_SOURCES } from './usage.js';

/** How long `opencode --version` may take when `orchestrator adapters` asks (it starts a 180 MB binary). */
const OPENCODE_VERSION_TIMEOUT_MS = 15_000;

registerAgent('opencode', {
  validateConfig: opencodeBlock.validate,
  runtime: {
    factory: createOpencodeAdapter,
    requiresCommand: true,
    defaultCommand: OPENCODE_DEFAULT_COMMAND,
    mcpDialect: 'inline-config-json',
    usageSources: OPENCODE_USAGE_SOURCES,
    credentialEnv: [...OPENCODE_CREDENTIAL_ENV],
    effortForwarding: 'not_forwarded',
    // The reduced session refuses every tool, so none is offered; OpenCode has no switch
    // that drops its system prompt, and dropping the workspace's AGENTS.md would also drop
    // the workspace's opencode.json, which may hold the provider being verified.
    verificationContext: ['project_instructions', 'system_prompt'],
    usageLimitRecognition: 'not_recognized',
    usageLimitNotRecognizedReason:
      'OpenCode reports a quota refusal (HTTP 429) only as an API error with no dependable reset time; ' +
      'the turn fails as response_error and is retried with backoff',
    versionProbe: { timeoutMs: OPENCODE_VERSION_TIMEOUT_MS, env: OPENCODE_SWITCHES },
    sandbox: {
      kind: 'none',
      reason:
        'OpenCode runs shell commands as the service user with no operating-system sandbox; its permission ' +
        'rules (opencode.permission) only decide which tools run and whether paths outside the workspace may ' +
        'be touched (external_directory, refused by default), so isolate the machine or container itself',
    },
  },
});
