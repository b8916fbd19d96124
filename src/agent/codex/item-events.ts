/**
 * One turn's items as events, the same for both interfaces: a tool item that
 * starts is timed, and its completion becomes a `tool_result`; an item that only
 * ever completes (exec reports most file changes that way) is a tool call of no
 * measurable duration. Answer text becomes a notification and the turn's final
 * message. Every item the model produced marks the turn as served.
 */
import type { TurnContext } from '../core/fork-per-turn.js';
import { ToolTracker, toolResultEvent } from '../core/tools.js';
import { type CodexItem, itemFailed, itemToolCall } from './items.js';

export class TurnItems {
  private readonly tools: ToolTracker;
  /** Text of the turn's last answer message, "" when none. */
  lastMessage = '';

  constructor(nowMs: () => number = Date.now) {
    this.tools = new ToolTracker(nowMs);
  }

  /** An item started. */
  started(item: CodexItem, ctx: TurnContext): void {
    const call = itemToolCall(item);
    if (call !== null) {
      ctx.spend.markModelReached();
      this.tools.begin(item.id, call);
    } else if (item.type === 'message' || item.type === 'reasoning') {
      ctx.spend.markModelReached();
    }
  }

  /** An item completed. */
  completed(item: CodexItem, ctx: TurnContext): void {
    const call = itemToolCall(item);
    if (call !== null) {
      ctx.spend.markModelReached();
      const ended = this.tools.end(item.id) ?? { call, durationMs: 0 };
      ctx.emit(toolResultEvent(ended, itemFailed(item)));
      return;
    }
    switch (item.type) {
      case 'message':
        ctx.spend.markModelReached();
        if (item.text !== '') {
          this.lastMessage = item.text;
          ctx.emit({ type: 'notification', message: item.text });
        }
        return;
      case 'reasoning':
        ctx.spend.markModelReached();
        return;
      case 'error':
        if (item.message !== '') ctx.emit({ type: 'notification', message: item.message });
        return;
      default:
        return;
    }
  }
}
