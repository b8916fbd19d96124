/**
 * Registration of the `copilot-cli` kind: GitHub Copilot CLI's `-p` mode, one process
 * per turn. Its stdout names no token count, so usage settles after each turn from
 * the summary the CLI writes at exit (session-cumulative, per model) and, for a turn
 * that ended without one, from the session's journal; premium requests come from the
 * `result` line. Posture: autopilot with every tool allowed and `--no-ask-user`;
 * plan mode, which waits for a person's approval, is refused by validate. A session
 * given tool servers gets them as `--additional-mcp-config` JSON with their tools allowed.
 */
import { registerAgent } from '../registry.js';
import { COPILOT_DEFAULT_COMMAND, createCopilotCliAdapter } from './adapter.js';
import { CREDENTIAL_ENV } from './command.js';
import { copilotCliBlock } from './config.js';
import { COPILOT_CLI_USAGE_SOURCES } from './usage.js';

registerAgent('copilot-cli', {
  validateConfig: copilotCliBlock.validate,
  runtime: {
    factory: createCopilotCliAdapter,
    requiresCommand: true,
    defaultCommand: COPILOT_DEFAULT_COMMAND,
    mcpDialect: 'mcp-json',
    usageSources: COPILOT_CLI_USAGE_SOURCES,
    credentialEnv: [...CREDENTIAL_ENV],
    effortForwarding: 'forwarded',
    // The reduced session drops tools, custom instructions and built-in MCP servers, but
    // the CLI has no switch that replaces its system prompt.
    verificationContext: ['system_prompt'],
    usageLimitRecognition: 'not_recognized',
    usageLimitNotRecognizedReason:
      'no Copilot quota refusal has been recorded to classify; a throttled provider (429) ends as a retryable response_error',
    sandbox: {
      kind: 'none',
      reason:
        'Copilot CLI runs shell commands as the service user with no operating-system sandbox; it only ' +
        'checks the paths its tools name against the workspace and the temp folder (copilot-cli.allow_all_paths ' +
        'lifts that), so isolate the machine or container itself',
    },
  },
});
