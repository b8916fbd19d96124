/**
 * Registration of the `claude-code` kind: Claude Code's `-p` mode, one process per
 * turn, usage read from its stream (per request while the turn runs, then the turn's
 * result with its per-model split and dollar cost). Permission posture: `acceptEdits`
 * with Bash allowed by default; modes that would ask a person are refused by validate.
 */
import { registerAgent } from '../registry.js';
import { CLAUDE_DEFAULT_COMMAND, createClaudeCodeAdapter } from './adapter.js';
import { claudeCodeBlock, resumeBlockedBy } from './config.js';
import { CLAUDE_CODE_USAGE_SOURCES } from './usage.js';

registerAgent('claude-code', {
  validateConfig: claudeCodeBlock.validate,
  runtime: {
    factory: createClaudeCodeAdapter,
    requiresCommand: true,
    defaultCommand: CLAUDE_DEFAULT_COMMAND,
    mcpDialect: 'mcp-json',
    usageSources: CLAUDE_CODE_USAGE_SOURCES,
    credentialEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    effortForwarding: 'forwarded',
    // The reduced session drops tools (--tools ""), instructions and MCP servers (--safe-mode)
    // and replaces the system prompt, so its request keeps none of the agent's context.
    verificationContext: [],
    usageLimitRecognition: 'recognized',
    sessionResumeBlockedBy: resumeBlockedBy,
    sandbox: {
      kind: 'unprobeable',
      whatToCheck:
        "Claude Code runs Bash unsandboxed unless its settings turn sandbox.enabled on (the agent HOME's " +
        "~/.claude/settings.json or the repository's .claude/settings.json); then on Linux it needs " +
        'bubblewrap and socat, and a sandbox that cannot start only warns and runs commands unsandboxed ' +
        'unless sandbox.failIfUnavailable is true. Check with /sandbox in an interactive claude run as the ' +
        'service user, with its HOME',
    },
  },
});
