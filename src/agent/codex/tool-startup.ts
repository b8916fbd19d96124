/**
 * Waiting for a session's tool servers before its first turn. The app-server starts a
 * thread's MCP servers in the background and does not hold the turn for them: a turn
 * started at once goes to the model without their tools. It reports each server's start
 * (`mcpServer/startupStatus/updated`: starting, then ready or failed), so the session
 * waits for every server of its own to settle, for a bounded time, before its first turn.
 */

/** One server's reported start-up state. */
interface Reported {
  status: string;
  error: string | null;
}

export class ToolServerStartup {
  private reported = new Map<string, Reported>();
  private wake: (() => void) | null = null;

  /** `names` are the session's servers; `waitMs` bounds the wait. */
  constructor(
    private readonly names: readonly string[],
    private readonly waitMs: number,
  ) {}

  /** Forgets what an earlier process reported: a new process starts its servers again. */
  reset(): void {
    this.reported = new Map();
  }

  /** Records one start-up report; returns a line for the operator when one of ours failed. */
  observe(params: unknown): string | null {
    const p = params !== null && typeof params === 'object' ? (params as Record<string, unknown>) : {};
    if (typeof p.name !== 'string' || typeof p.status !== 'string') return null;
    const error = typeof p.error === 'string' && p.error !== '' ? p.error : null;
    this.reported.set(p.name, { status: p.status, error });
    this.wake?.();
    if (!this.names.includes(p.name) || p.status !== 'failed') return null;
    return `tool server ${p.name} failed to start${error === null ? '' : `: ${error}`}`;
  }

  /**
   * Resolves once every server has settled (ready or failed), or the wait is over; returns
   * the names still starting. A server not reported at all is waited for only `graceMs`: a
   * build that does not report start-ups must not hold every first turn for the whole wait.
   */
  async settled(graceMs = 2_000): Promise<string[]> {
    const graceEnd = Date.now() + graceMs;
    const pending = () =>
      this.names.filter((n) => {
        const status = this.reported.get(n)?.status;
        return status === 'starting' || (status === undefined && Date.now() < graceEnd);
      });
    if (pending().length > 0) {
      await new Promise<void>((resolve) => {
        const timers = [setTimeout(resolve, this.waitMs), setTimeout(() => this.wake?.(), graceMs)];
        this.wake = () => {
          if (pending().length > 0) return;
          for (const t of timers) clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.names.filter((n) => this.reported.get(n)?.status === 'starting');
  }
}
