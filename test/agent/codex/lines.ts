/** `codex exec --json` lines, as the current format writes them, for fake runtimes. */
export const execLine = {
  threadStarted: (id = '01a22a64-0000-7000-8000-000000000001') =>
    JSON.stringify({ type: 'thread.started', thread_id: id }),
  turnStarted: () => JSON.stringify({ type: 'turn.started' }),
  message: (id: string, text: string) =>
    JSON.stringify({ type: 'item.completed', item: { id, type: 'agent_message', text } }),
  command: (id: string, command: string, phase: 'started' | 'completed', exitCode = 0) =>
    JSON.stringify({
      type: `item.${phase}`,
      item: {
        id,
        type: 'command_execution',
        command,
        aggregated_output: '',
        exit_code: phase === 'started' ? null : exitCode,
        status: phase === 'started' ? 'in_progress' : exitCode === 0 ? 'completed' : 'failed',
      },
    }),
  completed: (usage: { input: number; cached: number; output: number }) =>
    JSON.stringify({
      type: 'turn.completed',
      usage: {
        input_tokens: usage.input,
        cached_input_tokens: usage.cached,
        cache_write_input_tokens: 0,
        output_tokens: usage.output,
        reasoning_output_tokens: 0,
      },
    }),
  failed: (message: string) => JSON.stringify({ type: 'turn.failed', error: { message } }),
  error: (message: string) => JSON.stringify({ type: 'error', message }),
};
