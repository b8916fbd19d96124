/**
 * Registration of the `gemini` kind: Gemini CLI's headless `-p` mode, one process
 * per turn, usage read once per turn from its closing `result` line (split by
 * model, no cost). Approval posture: `yolo` by default; modes that would ask a
 * person are refused by validate. Sessions continue with `--resume`. The tool
 * server reaches a local session through the `mcpServers` of its managed settings.
 */
import { registerAgent } from '../registry.js';
import { createGeminiAdapter } from './adapter.js';
import { GEMINI_DEFAULT_COMMAND } from './command.js';
import { geminiBlock } from './config.js';
import { GEMINI_CREDENTIAL_ENV } from './home.js';
import { GEMINI_USAGE_SOURCES } from './usage.js';

/** How long `gemini --version` may take when `orchestrator adapters` asks. */
const GEMINI_VERSION_TIMEOUT_MS = 15_000;

registerAgent('gemini', {
  validateConfig: geminiBlock.validate,
  runtime: {
    factory: createGeminiAdapter,
    requiresCommand: true,
    defaultCommand: GEMINI_DEFAULT_COMMAND,
    mcpDialect: 'settings-json',
    usageSources: GEMINI_USAGE_SOURCES,
    credentialEnv: [...GEMINI_CREDENTIAL_ENV],
    effortForwarding: 'not_forwarded',
    // Gemini CLI has no per-launch switch that drops its tools, its system prompt or the
    // workspace's GEMINI.md; the managed home holds no user-level GEMINI.md.
    verificationContext: ['all_tools', 'project_instructions', 'system_prompt'],
    usageLimitRecognition: 'not_recognized',
    usageLimitNotRecognizedReason:
      'Gemini CLI reports a quota refusal (HTTP 429) only as API error text with no dependable reset time; ' +
      'the turn fails as response_error and is retried with backoff',
    // `gemini --version` loads the whole CLI (2–6 s on a small machine) and, unless told
    // not to, starts itself again in a second node process first.
    versionProbe: { timeoutMs: GEMINI_VERSION_TIMEOUT_MS, env: { GEMINI_CLI_NO_RELAUNCH: 'true' } },
    sandbox: {
      kind: 'unprobeable',
      whatToCheck:
        'Gemini CLI runs shell commands unsandboxed unless GEMINI_SANDBOX is set in the agent environment or ' +
        "the repository's .gemini/settings.json sets tools.sandbox; then it runs inside a docker or podman " +
        'container (sandbox-exec on macOS), which must be installed and usable by the service user. Check ' +
        'with the same environment: gemini -p "run touch probe" --approval-mode yolo in a scratch folder',
    },
  },
});
