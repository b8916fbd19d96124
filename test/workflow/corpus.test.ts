/**
 * The workflow corpus: every file under testdata/workflows/invalid is a realistic WORKFLOW.md
 * with exactly one problem, and every file under testdata/workflows/valid is one an operator
 * could ship. The tables pin, for each broken file, the diagnostic code and the line of the
 * ORIGINAL file (BOM and CRLF included) that `orchestrator validate` must report, and check
 * that the real CLI agrees. Environments are spelled out per row: nothing is read from
 * process.env, so a developer's GITHUB_TOKEN or ORCHESTRATOR_* cannot change a result.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kindCatalog } from '../../src/cli/catalog.js';
import type { Diagnostic } from '../../src/domain/diagnostic.js';
import { loadWorkflow } from '../../src/workflow/load.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INVALID_DIR = path.join(ROOT, 'testdata', 'workflows', 'invalid');
const VALID_DIR = path.join(ROOT, 'testdata', 'workflows', 'valid');
const WARNING_DIR = path.join(ROOT, 'testdata', 'workflows', 'warning');
const CLI = path.join(ROOT, 'src', 'cli', 'main.ts');

type Env = Record<string, string>;

/**
 * Resolves `$GITHUB_TOKEN`. Deliberately not `ghp_…`-shaped: github.api_key.literal is
 * currently checked on the RESOLVED value, so a real-looking token supplied through
 * $GITHUB_TOKEN is wrongly reported as a literal token in the file.
 */
const GH: Env = { GITHUB_TOKEN: 'test-token-for-corpus' };

interface InvalidRow {
  file: string;
  /** Environment for `$VAR`, ORCHESTRATOR_* and ORCHESTRATOR_ENV_FILE; {} when absent. */
  env?: Env;
  /** The code that must be reported... */
  code: string;
  /** ...at this line of the original file (null: a problem with no place in the file). */
  line: number | null;
  /** Text the message must contain (a "did you mean", the variable to check). */
  message?: string;
}

/*
 * Deliberately NOT in this table, because src/ currently gets them wrong and a row would
 * enshrine the wrong answer: an unclosed quote or flow list that is
 * not on the last line (reported at the end of the front matter / on the next line), an
 * undefined YAML alias (reported at line 2), an ORCHESTRATOR_* override with a bad value for
 * the schema (reported at the file's line, or the first key, without naming the variable),
 * `file:` written as a plain path, a front matter preceded by a blank line, an empty string
 * inside a list (code carries the list index, message says "at least 1").
 */
const INVALID: InvalidRow[] = [
  { file: 'agent-by-state-list.md', code: 'agent.max_concurrent_agents_by_state.invalid', line: 25 },
  {
    file: 'agent-by-state-zero.md',
    code: 'agent.max_concurrent_agents_by_state.todo.out_of_range',
    line: 25,
  },
  { file: 'agent-command-list.md', code: 'agent.command.invalid', line: 25 },
  { file: 'agent-command-unclosed-quote.md', code: 'agent.command.quoting', line: 24 },
  { file: 'agent-kind-missing.md', code: 'agent.kind.missing', line: 21 },
  { file: 'agent-kind-typo.md', code: 'agent.kind.unknown', line: 21, message: 'did you mean "claude-code"' },
  { file: 'agent-kind-unknown.md', code: 'agent.kind.unknown', line: 21 },
  { file: 'agent-max-concurrent-agents-list.md', code: 'agent.max_concurrent_agents.invalid', line: 23 },
  { file: 'agent-max-cost-usd-dollar-sign.md', code: 'agent.max_cost_usd.invalid', line: 24 },
  { file: 'agent-max-cost-usd-negative.md', code: 'agent.max_cost_usd.out_of_range', line: 24 },
  { file: 'agent-max-retry-backoff-map.md', code: 'agent.max_retry_backoff_ms.invalid', line: 25 },
  { file: 'agent-max-sessions-negative.md', code: 'agent.max_sessions.out_of_range', line: 24 },
  { file: 'agent-max-tokens-not-number.md', code: 'agent.max_tokens.invalid', line: 24 },
  { file: 'agent-max-turns-fraction.md', code: 'agent.max_turns.invalid', line: 22 },
  { file: 'agent-max-turns-negative.md', code: 'agent.max_turns.out_of_range', line: 22 },
  { file: 'agent-max-turns-not-number.md', code: 'agent.max_turns.invalid', line: 22 },
  { file: 'agent-missing.md', code: 'agent.kind.missing', line: 3 },
  { file: 'agent-not-a-map.md', code: 'agent.invalid', line: 20 },
  { file: 'agent-stall-timeout-negative.md', code: 'agent.stall_timeout_ms.out_of_range', line: 24 },
  { file: 'agent-turn-timeout-not-number.md', code: 'agent.turn_timeout_ms.invalid', line: 24 },
  { file: 'blocked-state-is-active.md', code: 'tracker.blocked_state.collision', line: 9 },
  { file: 'bom-logging-level-unsupported.md', code: 'logging.level.unsupported', line: 29 },
  { file: 'bom-yaml-bad-indentation.md', code: 'workflow.yaml_syntax', line: 22 },
  { file: 'ci-feedback-escalation-unsupported.md', code: 'ci_feedback.escalation.unsupported', line: 30 },
  { file: 'ci-feedback-list.md', code: 'ci_feedback.invalid', line: 29 },
  { file: 'ci-feedback-max-retries-not-number.md', code: 'ci_feedback.max_retries.invalid', line: 30 },
  {
    file: 'claude-code-allowed-tools-string.md',
    env: GH,
    code: 'claude-code.allowed_tools.invalid',
    line: 24,
  },
  { file: 'claude-code-block-list.md', env: GH, code: 'claude-code.invalid', line: 24 },
  {
    file: 'tracker-token-is-agent-credential.md',
    env: { ...GH, MOCK_API_KEY: GH.GITHUB_TOKEN as string },
    code: 'agent.credential.tracker_token',
    line: 5,
    message: 'MOCK_API_KEY',
  },
  { file: 'claude-code-effort-unsupported.md', env: GH, code: 'claude-code.effort.unsupported', line: 24 },
  {
    file: 'claude-code-max-budget-zero.md',
    env: GH,
    code: 'claude-code.max_budget_usd.out_of_range',
    line: 24,
  },
  { file: 'claude-code-max-turns-zero.md', env: GH, code: 'claude-code.max_turns.out_of_range', line: 25 },
  {
    file: 'claude-code-permission-mode-default.md',
    env: GH,
    code: 'claude-code.permission_mode.interactive',
    line: 24,
    message: 'bypassPermissions',
  },
  {
    file: 'claude-code-permission-mode-plan.md',
    env: GH,
    code: 'claude-code.permission_mode.interactive',
    line: 24,
  },
  {
    file: 'claude-code-permission-mode-unknown.md',
    env: GH,
    code: 'claude-code.permission_mode.unsupported',
    line: 24,
  },
  {
    file: 'claude-code-session-persistence-not-bool.md',
    env: GH,
    code: 'claude-code.session_persistence.invalid',
    line: 25,
  },
  {
    file: 'claude-code-tools-overlap.md',
    env: GH,
    code: 'claude-code.tools.overlap',
    line: 25,
    message: 'Bash',
  },
  {
    file: 'codex-approval-policy-unsupported.md',
    env: GH,
    code: 'codex.approval_policy.unsupported',
    line: 23,
  },
  { file: 'codex-config-list.md', env: GH, code: 'codex.config.invalid', line: 24 },
  {
    file: 'codex-config-value-map.md',
    env: GH,
    code: 'codex.config.shell_environment_policy.invalid',
    line: 25,
  },
  { file: 'codex-effort-unsupported.md', env: GH, code: 'codex.effort.unsupported', line: 23 },
  { file: 'codex-sandbox-unsupported.md', env: GH, code: 'codex.sandbox.unsupported', line: 23 },
  {
    file: 'copilot-cli-mode-plan.md',
    env: { TRACKER_GITHUB_TOKEN: 'test-token-for-corpus' },
    code: 'copilot-cli.mode.needs_approval',
    line: 21,
  },
  { file: 'crlf-server-port-too-big.md', code: 'server.port.out_of_range', line: 26 },
  { file: 'crlf-template-unknown-variable.md', code: 'template.unknown_variable', line: 30 },
  { file: 'db-path-bad-variable-name.md', code: 'db_path.bad_reference', line: 28 },
  { file: 'db-path-list.md', code: 'db_path.invalid', line: 28 },
  { file: 'echo-block-string.md', code: 'echo.invalid', line: 28 },
  { file: 'echo-delay-negative.md', code: 'echo.delay_ms.out_of_range', line: 29 },
  { file: 'echo-fail-rate-too-big.md', code: 'echo.fail_rate.out_of_range', line: 30 },
  // The line is in the .env file the diagnostic names, not in the workflow.
  {
    file: 'env-file-bad-line.md',
    env: { ORCHESTRATOR_ENV_FILE: path.join(INVALID_DIR, 'broken.env') },
    code: 'env_file.syntax',
    line: 3,
  },
  {
    file: 'env-file-missing.md',
    env: { ORCHESTRATOR_ENV_FILE: path.join(INVALID_DIR, 'no-such-file.env') },
    code: 'env_file.not_found',
    line: null,
  },
  {
    file: 'env-override-agent-max-turns-not-int.md',
    env: { ORCHESTRATOR_AGENT_MAX_TURNS: 'abc' },
    code: 'env_override.invalid',
    line: null,
    message: 'ORCHESTRATOR_AGENT_MAX_TURNS',
  },
  {
    file: 'env-override-comment-flag-not-bool.md',
    env: { ORCHESTRATOR_TRACKER_COMMENTS_ON_DISPATCH: 'yes' },
    code: 'env_override.invalid',
    line: null,
    message: 'ORCHESTRATOR_TRACKER_COMMENTS_ON_DISPATCH',
  },
  {
    file: 'env-override-max-cost-not-number.md',
    env: { ORCHESTRATOR_AGENT_MAX_COST_USD: 'five dollars' },
    code: 'env_override.invalid',
    line: null,
    message: 'ORCHESTRATOR_AGENT_MAX_COST_USD',
  },
  {
    file: 'env-override-port-out-of-range.md',
    env: { ORCHESTRATOR_SERVER_PORT: '70000' },
    code: 'server.port.out_of_range',
    line: null,
    message: 'ORCHESTRATOR_SERVER_PORT',
  },
  { file: 'blank-line-before-front-matter.md', code: 'workflow.front_matter.not_first_line', line: 2 },
  { file: 'file-block-not-a-map.md', code: 'file.invalid', line: 11 },
  { file: 'active-states-empty-string.md', code: 'tracker.active_states.empty', line: 5 },
  { file: 'error-deep-in-file.md', code: 'worker.ssh_strict_host_key_checking.unsupported', line: 85 },
  { file: 'file-path-list.md', code: 'file.path.invalid', line: 12 },
  { file: 'file-tracker-without-file-block.md', code: 'file.path.missing', line: 3 },
  { file: 'file-tracker-without-path.md', code: 'file.path.missing', line: 12 },
  {
    file: 'gemini-approval-mode-default.md',
    env: GH,
    code: 'gemini.approval_mode.interactive',
    line: 24,
    message: 'yolo',
  },
  {
    file: 'opencode-permission-ask.md',
    env: GH,
    code: 'opencode.permission.interactive',
    line: 26,
    message: 'waits for a person',
  },
  { file: 'front-matter-empty.md', code: 'tracker.kind.missing', line: null },
  { file: 'front-matter-is-list.md', code: 'workflow.front_matter.not_map', line: 2 },
  { file: 'front-matter-is-scalar.md', code: 'workflow.front_matter.not_map', line: 2 },
  { file: 'front-matter-unclosed.md', code: 'workflow.front_matter.unclosed', line: 1 },
  { file: 'github-api-key-bad-variable-name.md', env: GH, code: 'tracker.api_key.bad_reference', line: 5 },
  {
    file: 'github-api-key-env-blank.md',
    env: { GITHUB_TOKEN: '   ' },
    code: 'tracker.api_key.empty',
    line: 5,
    message: 'GITHUB_TOKEN',
  },
  { file: 'github-api-key-env-unset.md', code: 'tracker.api_key.empty', line: 5, message: 'GITHUB_TOKEN' },
  { file: 'github-api-key-not-string.md', env: GH, code: 'tracker.api_key.invalid', line: 5 },
  {
    file: 'github-api-key-unclosed-brace.md',
    env: GH,
    code: 'tracker.api_key.bad_reference',
    line: 5,
    message: 'unclosed',
  },
  { file: 'github-block-max-pages-negative.md', env: GH, code: 'github.max_pages.invalid', line: 28 },
  { file: 'github-endpoint-not-url.md', env: GH, code: 'github.endpoint.invalid', line: 11 },
  {
    file: 'github-endpoint-unclosed-brace.md',
    env: { ...GH, GHE_URL: 'https://github.acme.internal/api/v3' },
    code: 'tracker.endpoint.bad_reference',
    line: 11,
  },
  { file: 'github-missing-api-key.md', env: GH, code: 'tracker.api_key.missing', line: 4 },
  { file: 'github-missing-project.md', env: GH, code: 'tracker.project.missing', line: 4 },
  {
    file: 'github-project-env-not-owner-repo.md',
    env: { ...GH, GITHUB_REPOSITORY: 'acme' },
    code: 'github.project.format',
    line: 6,
  },
  {
    file: 'github-project-env-unset.md',
    env: GH,
    code: 'tracker.project.empty',
    line: 6,
    message: 'GITHUB_REPOSITORY',
  },
  {
    file: 'github-project-not-owner-repo.md',
    env: GH,
    code: 'github.project.format',
    line: 6,
    message: 'owner/repo',
  },
  {
    file: 'github-project-unclosed-brace.md',
    env: { ...GH, GITHUB_REPOSITORY: 'acme/api' },
    code: 'tracker.project.bad_reference',
    line: 6,
  },
  { file: 'github-project-url.md', env: GH, code: 'github.project.format', line: 6 },
  { file: 'github-query-filter-map.md', env: GH, code: 'tracker.query_filter.invalid', line: 11 },
  { file: 'handoff-state-empty-string.md', code: 'tracker.handoff_state.empty', line: 8 },
  {
    file: 'handoff-state-env-unset.md',
    code: 'tracker.handoff_state.empty',
    line: 8,
    message: 'HANDOFF_STATE',
  },
  { file: 'handoff-state-is-active.md', code: 'tracker.handoff_state.collision', line: 8 },
  { file: 'handoff-state-is-terminal.md', code: 'tracker.handoff_state.collision', line: 8 },
  { file: 'hooks-after-create-list.md', code: 'hooks.after_create.invalid', line: 30 },
  { file: 'hooks-before-run-map.md', code: 'hooks.before_run.invalid', line: 30 },
  { file: 'hooks-not-a-map.md', code: 'hooks.invalid', line: 29 },
  { file: 'hooks-timeout-negative.md', code: 'hooks.timeout_ms.out_of_range', line: 30 },
  { file: 'hooks-timeout-not-number.md', code: 'hooks.timeout_ms.invalid', line: 30 },
  { file: 'in-progress-state-is-handoff.md', code: 'tracker.in_progress_state.collision', line: 7 },
  { file: 'in-progress-state-not-active.md', code: 'tracker.in_progress_state.not_active', line: 7 },
  { file: 'logging-format-unsupported.md', code: 'logging.format.unsupported', line: 30 },
  { file: 'logging-level-unsupported.md', code: 'logging.level.unsupported', line: 29 },
  { file: 'logging-not-a-map.md', code: 'logging.invalid', line: 28 },
  { file: 'mock-line-delay-not-number.md', code: 'mock.line_delay_ms.invalid', line: 29 },
  { file: 'no-front-matter.md', code: 'tracker.kind.missing', line: null },
  { file: 'polling-interval-negative.md', code: 'polling.interval_ms.out_of_range', line: 15 },
  { file: 'polling-interval-not-number.md', code: 'polling.interval_ms.invalid', line: 15 },
  { file: 'polling-not-a-map.md', code: 'polling.invalid', line: 14 },
  { file: 'reactions-debounce-negative.md', code: 'reactions.ci_failure.debounce_ms.out_of_range', line: 30 },
  { file: 'reactions-entry-string.md', code: 'reactions.ci_failure.invalid', line: 29 },
  {
    file: 'reactions-escalation-unsupported.md',
    code: 'reactions.ci_failure.escalation.unsupported',
    line: 30,
  },
  { file: 'reactions-list.md', code: 'reactions.invalid', line: 29 },
  {
    file: 'reactions-max-continuation-turns-zero.md',
    code: 'reactions.ci_failure.max_continuation_turns.out_of_range',
    line: 30,
  },
  {
    file: 'reactions-max-retries-negative.md',
    code: 'reactions.ci_failure.max_retries.out_of_range',
    line: 30,
  },
  {
    file: 'reactions-poll-interval-too-small.md',
    code: 'reactions.ci_failure.poll_interval_ms.out_of_range',
    line: 31,
  },
  { file: 'self-review-commands-string.md', code: 'self_review.verification_commands.invalid', line: 30 },
  { file: 'self-review-enabled-not-bool.md', code: 'self_review.enabled.invalid', line: 29 },
  {
    file: 'self-review-enabled-without-commands.md',
    code: 'self_review.verification_commands.missing',
    line: 29,
  },
  {
    file: 'self-review-max-iterations-too-big.md',
    code: 'self_review.max_iterations.out_of_range',
    line: 30,
  },
  { file: 'self-review-max-iterations-zero.md', code: 'self_review.max_iterations.out_of_range', line: 30 },
  { file: 'self-review-not-a-map.md', code: 'self_review.invalid', line: 28 },
  { file: 'self-review-reviewer-unsupported.md', code: 'self_review.reviewer.unsupported', line: 30 },
  {
    file: 'server-allowed-hosts-with-port.md',
    code: 'server.allowed_hosts.invalid',
    line: 30,
    message: 'without a port',
  },
  { file: 'server-host-list.md', code: 'server.host.invalid', line: 27 },
  { file: 'server-host-not-ip.md', code: 'server.host.invalid', line: 27, message: 'localhost' },
  { file: 'server-not-a-map.md', code: 'server.invalid', line: 25 },
  { file: 'server-port-fraction.md', code: 'server.port.invalid', line: 26 },
  { file: 'server-port-negative.md', code: 'server.port.out_of_range', line: 26 },
  { file: 'server-port-not-number.md', code: 'server.port.invalid', line: 26 },
  { file: 'server-port-too-big.md', code: 'server.port.out_of_range', line: 26 },
  { file: 'active-states-empty.md', code: 'tracker.active_states.missing', line: 5 },
  { file: 'active-states-omitted.md', code: 'tracker.active_states.missing', line: 4 },
  { file: 'states-overlap.md', code: 'tracker.states.overlap', line: 6, message: 'todo' },
  { file: 'template-empty-body.md', code: 'workflow.prompt.empty', line: 28 },
  { file: 'template-error-deep-in-body.md', code: 'template.unknown_variable', line: 69 },
  { file: 'template-include-partial.md', code: 'template.render', line: 30 },
  { file: 'template-stray-endif.md', code: 'template.syntax', line: 30 },
  { file: 'template-unclosed-for.md', code: 'template.syntax', line: 31 },
  { file: 'template-unclosed-if.md', code: 'template.syntax', line: 29 },
  { file: 'template-unclosed-output.md', code: 'template.syntax', line: 31 },
  { file: 'template-unknown-filter.md', code: 'template.unknown_filter', line: 28 },
  { file: 'template-unknown-issue-field.md', code: 'template.unknown_variable', line: 30 },
  { file: 'template-unknown-loop-field.md', code: 'template.unknown_variable', line: 31 },
  { file: 'template-unknown-tag.md', code: 'template.syntax', line: 29 },
  { file: 'template-unknown-top-level-variable.md', code: 'template.unknown_variable', line: 28 },
  { file: 'token-rates-kind-list.md', code: 'token_rates.mock.invalid', line: 29 },
  { file: 'token-rates-negative.md', code: 'token_rates.mock.input_per_mtok.out_of_range', line: 30 },
  { file: 'token-rates-not-a-map.md', code: 'token_rates.invalid', line: 28 },
  { file: 'token-rates-not-number.md', code: 'token_rates.mock.output_per_mtok.invalid', line: 31 },
  { file: 'tracker-active-states-not-list.md', code: 'tracker.active_states.invalid', line: 5 },
  { file: 'tracker-comments-not-map.md', code: 'tracker.comments.invalid', line: 10 },
  {
    file: 'tracker-comments-on-dispatch-not-bool.md',
    code: 'tracker.comments.on_dispatch.invalid',
    line: 11,
  },
  { file: 'tracker-handoff-state-list.md', code: 'tracker.handoff_state.invalid', line: 8 },
  { file: 'tracker-kind-blank.md', code: 'tracker.kind.missing', line: 4 },
  {
    file: 'tracker-kind-capitalised.md',
    code: 'tracker.kind.unknown',
    line: 4,
    message: 'did you mean "file"',
  },
  { file: 'tracker-kind-list.md', code: 'tracker.kind.invalid', line: 4 },
  { file: 'tracker-kind-missing.md', code: 'tracker.kind.missing', line: 4 },
  { file: 'tracker-kind-typo.md', code: 'tracker.kind.unknown', line: 4, message: 'did you mean "file"' },
  { file: 'tracker-kind-unknown.md', code: 'tracker.kind.unknown', line: 4 },
  { file: 'tracker-missing.md', code: 'tracker.kind.missing', line: 4 },
  { file: 'tracker-not-a-map.md', code: 'tracker.invalid', line: 3 },
  { file: 'tracker-terminal-states-map.md', code: 'tracker.terminal_states.invalid', line: 7 },
  { file: 'worker-not-a-map.md', code: 'worker.invalid', line: 29 },
  {
    file: 'worker-per-host-cap-negative.md',
    code: 'worker.max_concurrent_agents_per_host.out_of_range',
    line: 30,
  },
  { file: 'worker-ssh-hosts-map.md', code: 'worker.ssh_hosts.invalid', line: 30 },
  { file: 'worker-ssh-hosts-string.md', code: 'worker.ssh_hosts.invalid', line: 29 },
  {
    file: 'worker-ssh-hosts-bad-entry.md',
    code: 'worker.ssh_hosts.invalid',
    line: 31,
    message: 'ci@build2.internal:22:22',
  },
  {
    file: 'worker-ssh-hosts-unbracketed-ipv6.md',
    code: 'worker.ssh_hosts.invalid',
    line: 29,
    message: 'in brackets',
  },
  {
    file: 'worker-ssh-hosts-port-out-of-range.md',
    code: 'worker.ssh_hosts.invalid',
    line: 30,
    message: '70000',
  },
  { file: 'worker-ssh-user-invalid.md', code: 'worker.ssh_user.invalid', line: 30, message: 'ci bot' },
  {
    file: 'worker-ssh-forward-env-bad-name.md',
    code: 'worker.ssh_forward_env.invalid',
    line: 12,
    message: 'NOT A NAME',
  },
  {
    file: 'worker-ssh-connect-timeout-zero.md',
    code: 'worker.ssh_connect_timeout_ms.out_of_range',
    line: 30,
  },
  {
    file: 'worker-ssh-identity-file-env-unset.md',
    code: 'worker.ssh_identity_file.empty',
    line: 30,
    message: 'ORCHESTRATOR_SSH_KEY',
  },
  { file: 'worker-ssh-known-hosts-file-list.md', code: 'worker.ssh_known_hosts_file.invalid', line: 30 },
  {
    file: 'worker-strict-host-key-checking-bool.md',
    code: 'worker.ssh_strict_host_key_checking.unsupported',
    line: 30,
  },
  {
    file: 'worker-strict-host-key-checking-unsupported.md',
    code: 'worker.ssh_strict_host_key_checking.unsupported',
    line: 30,
  },
  { file: 'workspace-not-a-map.md', code: 'workspace.invalid', line: 17 },
  { file: 'workspace-root-bad-reference.md', code: 'workspace.root.bad_reference', line: 18 },
  {
    file: 'workspace-root-env-unset.md',
    code: 'workspace.root.empty',
    line: 18,
    message: 'ORCHESTRATOR_WORKSPACES',
  },
  { file: 'workspace-root-list.md', code: 'workspace.root.invalid', line: 19 },
  { file: 'yaml-bad-indentation.md', code: 'workflow.yaml_syntax', line: 22 },
  { file: 'yaml-block-script-bad-indentation.md', code: 'workflow.yaml_syntax', line: 31 },
  { file: 'yaml-duplicate-key.md', code: 'workflow.yaml_duplicate_key', line: 24 },
  { file: 'yaml-duplicate-section.md', code: 'workflow.yaml_duplicate_key', line: 28 },
  { file: 'yaml-missing-colon-space.md', code: 'workflow.yaml_syntax', line: 26 },
  { file: 'yaml-tab-indentation.md', code: 'workflow.yaml_syntax', line: 15 },
  // The quote is on the last YAML line on purpose: opened earlier, it is reported at the end of the front matter.
  { file: 'yaml-unclosed-quote.md', code: 'workflow.yaml_syntax', line: 27 },
];

/** The child's whole environment: enough to start node, plus the row's variables. */
const childEnv = (env: Env): Env => ({
  PATH: process.env.PATH ?? '',
  ...(process.env.HOME !== undefined ? { HOME: process.env.HOME } : {}),
  ...(process.env.TMPDIR !== undefined ? { TMPDIR: process.env.TMPDIR } : {}),
  ...env,
});

function load(file: string, env: Env) {
  return loadWorkflow(file, { env, kinds: kindCatalog(), checkRender: true });
}

function diagnosticsOf(result: ReturnType<typeof load>): Diagnostic[] {
  return result.ok ? result.workflow.diagnostics : result.diagnostics;
}

/** One line per diagnostic, so a failing assertion shows everything that was reported. */
function describeAll(diagnostics: readonly Diagnostic[]): string {
  return diagnostics
    .map((d) => `${d.line ?? '-'}:${d.column ?? '-'} ${d.severity} ${d.code}: ${d.message}`)
    .join('\n');
}

function hasStackTrace(text: string): boolean {
  return text.includes('    at ') || text.includes('.ts:');
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort();
}

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI with exactly `env` (plus PATH/HOME), never the test process's environment. */
function runCli(args: string[], env: Env): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: ROOT,
      env: childEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('invalid workflow corpus', () => {
  it('has a row for every broken file, so a file added without an expectation fails', () => {
    const inTable = new Set(INVALID.map((row) => row.file));
    expect(markdownFiles(INVALID_DIR).filter((file) => !inTable.has(file))).toEqual([]);
  });

  it('has no row for a file that does not exist, and no file twice', () => {
    const onDisk = new Set(markdownFiles(INVALID_DIR));
    expect(INVALID.filter((row) => !onDisk.has(row.file)).map((row) => row.file)).toEqual([]);
    expect(new Set(INVALID.map((row) => row.file)).size).toBe(INVALID.length);
  });

  it('keeps at least 80 broken files, so the corpus cannot quietly shrink', () => {
    expect(INVALID.length).toBeGreaterThanOrEqual(80);
  });

  it.each(INVALID)('$file is rejected with $code at line $line, not accepted or pointed elsewhere', (row) => {
    const result = load(path.join(INVALID_DIR, row.file), row.env ?? {});
    const diagnostics = diagnosticsOf(result);
    const report = describeAll(diagnostics);
    expect(result.ok, report).toBe(false);
    const withCode = diagnostics.filter((d) => d.code === row.code);
    expect(withCode.length, `no ${row.code} in:\n${report}`).toBeGreaterThan(0);
    const atLine = withCode.filter((d) => d.line === row.line);
    expect(atLine.length, `${row.code} not at line ${row.line} in:\n${report}`).toBeGreaterThan(0);
    expect(
      atLine.every((d) => d.severity === 'error'),
      report,
    ).toBe(true);
    if (row.message !== undefined) {
      expect(atLine.map((d) => d.message).join('\n')).toContain(row.message);
    }
    for (const d of diagnostics) {
      expect(hasStackTrace(d.message), `stack trace leaked into: ${d.message}`).toBe(false);
      expect(d.message, `multi-line message: ${d.message}`).not.toMatch(/[\r\n]/);
      expect(d.message.trim()).not.toBe('');
    }
  });
});

/** Files the CLI is run on: one per layer (YAML, schema, env, template) plus the BOM and CRLF ones. */
const CLI_SAMPLE = [
  'yaml-tab-indentation.md',
  'server-port-too-big.md',
  'bom-logging-level-unsupported.md',
  'github-api-key-env-unset.md',
  'template-unknown-issue-field.md',
  'env-override-agent-max-turns-not-int.md',
];

interface JsonReport {
  valid: boolean;
  errors: number;
  diagnostics: Array<{ code: string; line: number | null; message: string }>;
}

describe.concurrent('validate CLI on broken files', () => {
  it.each(CLI_SAMPLE)(
    '%s exits 1 with the code and line in --format json, without a stack trace',
    async (file) => {
      const row = INVALID.find((r) => r.file === file);
      if (row === undefined) throw new Error(`${file} has no row in the table`);
      const run = await runCli(['validate', path.join(INVALID_DIR, file), '--format', 'json'], row.env ?? {});
      expect(run.code, run.stderr).toBe(1);
      expect(hasStackTrace(run.stderr), run.stderr).toBe(false);
      const json = JSON.parse(run.stdout) as JsonReport;
      expect(json.valid).toBe(false);
      expect(json.errors).toBeGreaterThan(0);
      expect(json.diagnostics).toContainEqual(expect.objectContaining({ code: row.code, line: row.line }));
      for (const d of json.diagnostics) expect(hasStackTrace(d.message), d.message).toBe(false);
    },
  );
});

interface ValidRow {
  file: string;
  env?: Env;
  /**
   * A file written for another tool (Symphony, Sortie), loaded unchanged: exactly these
   * diagnostics (severity, code, line), notes about every key read differently included.
   * Absent: the file loads with none at all.
   */
  expected?: [Diagnostic['severity'], string, number][];
}

/** `$VAR`s of the reference-format samples: a Linear key, a Jira site and token. */
const LINEAR: Env = { LINEAR_API_KEY: 'lin_api_test_for_corpus' };
const JIRA: Env = {
  SORTIE_JIRA_ENDPOINT: 'https://acme.atlassian.net',
  SORTIE_JIRA_API_KEY: 'bot@acme.example:test-token-for-corpus',
};

const VALID: ValidRow[] = [
  { file: 'all-hooks.md' },
  { file: 'bom.md' },
  { file: 'crlf-line-endings.md' },
  { file: 'every-template-variable.md' },
  { file: 'file-echo-demo.md' },
  { file: 'file-gemini.md' },
  { file: 'file-mock-minimal.md' },
  { file: 'file-opencode.md' },
  { file: 'github-claude-code.md', env: GH },
  { file: 'github-copilot-cli.md', env: { TRACKER_GITHUB_TOKEN: 'test-token-for-corpus' } },
  { file: 'github-enterprise-codex.md', env: GH },
  {
    file: 'github-env-project.md',
    env: { ...GH, GITHUB_REPOSITORY: 'acme/api', RUNNER_TEMP: '/home/runner/work/_temp' },
  },
  { file: 'lenient-values.md' },
  { file: 'per-state-concurrency.md' },
  { file: 'self-review-and-reactions.md', env: GH },
  { file: 'server-logging-and-paths.md' },
  { file: 'ssh-workers.md' },
  {
    file: 'sortie-jira.md',
    env: JIRA,
    expected: [
      ['info', 'workflow.key.mapped', 28],
      ['info', 'workflow.key.mapped', 30],
      ['info', 'workflow.key.mapped', 30],
      ['info', 'workflow.key.mapped', 50],
      ['info', 'workflow.key.mapped', 70],
    ],
  },
  {
    file: 'symphony-linear.md',
    env: LINEAR,
    // Symphony has no handoff state: the agent moves the issue itself, which this service warns about.
    expected: [
      ['warning', 'tracker.handoff_state.unbounded', 4],
      ['info', 'workflow.key.mapped', 6],
      ['info', 'agent.kind.inferred', 34],
      ['info', 'workflow.key.mapped', 35],
      ['info', 'workflow.key.mapped', 41],
      ['info', 'workflow.key.mapped', 45],
      ['info', 'workflow.key.mapped', 46],
      ['info', 'workflow.key.mapped', 47],
    ],
  },
  { file: 'token-rates-and-budgets.md', env: GH },
];

describe('valid workflow corpus', () => {
  it('has a row for every valid file, and no row without a file', () => {
    const inTable = VALID.map((row) => row.file).sort();
    expect(inTable).toEqual(markdownFiles(VALID_DIR));
  });

  it('keeps at least 12 valid files', () => {
    expect(VALID.length).toBeGreaterThanOrEqual(12);
  });

  it.each(VALID)('$file loads with no error and no warning (a good file is not flagged)', (row) => {
    const result = load(path.join(VALID_DIR, row.file), row.env ?? {});
    const diagnostics = diagnosticsOf(result);
    expect(result.ok, describeAll(diagnostics)).toBe(true);
    expect(
      diagnostics.map((d) => [d.severity, d.code, d.line]),
      describeAll(diagnostics),
    ).toEqual(row.expected ?? []);
  });

  it('the file-tracker samples point at an issues file that exists, so they would also start', () => {
    for (const row of VALID) {
      const result = load(path.join(VALID_DIR, row.file), row.env ?? {});
      if (!result.ok || result.workflow.config.tracker.kind !== 'file') continue;
      const issues = result.workflow.config.tracker.options.path;
      expect(typeof issues, row.file).toBe('string');
      expect(readdirSync(VALID_DIR), row.file).toContain(path.basename(String(issues)));
    }
  });
});

describe.concurrent('validate --strict CLI on valid files', () => {
  it.each(VALID)('$file exits 0 under --strict (no warning slipped in; notes never fail)', async (row) => {
    const run = await runCli(['validate', path.join(VALID_DIR, row.file), '--strict'], row.env ?? {});
    const warned = (row.expected ?? []).some(([severity]) => severity === 'warning');
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(warned ? 1 : 0);
    expect(hasStackTrace(run.stderr), run.stderr).toBe(false);
  });
});

interface WarningRow {
  file: string;
  /** The one warning the file must load with... */
  code: string;
  /** ...at this line of the original file. */
  line: number;
}

/** Files an operator could ship that still deserve a warning: they load, and say why they are risky. */
const WARNING: WarningRow[] = [
  // The README's first workflow before it gained a handoff state: it runs until the no-progress cap stops it.
  { file: 'readme-minimal-no-handoff.md', code: 'tracker.handoff_state.unbounded', line: 3 },
  { file: 'server-host-exposed.md', code: 'server.host.exposed', line: 27 },
];

describe('warning workflow corpus', () => {
  it('has a row for every file, and no row without a file', () => {
    expect(WARNING.map((row) => row.file).sort()).toEqual(markdownFiles(WARNING_DIR));
  });

  it.each(WARNING)(
    '$file loads with exactly $code at line $line, not silently and not as an error',
    (row) => {
      const result = load(path.join(WARNING_DIR, row.file), {});
      const diagnostics = diagnosticsOf(result);
      expect(result.ok, describeAll(diagnostics)).toBe(true);
      expect(diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([['warning', row.code, row.line]]);
    },
  );
});
