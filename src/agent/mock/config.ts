/**
 * The `mock:` block. The mock runtime takes its behaviour from directives in the
 * prompt, so the block only tunes the runtime itself.
 */
import { z } from 'zod';
import { defineBlock } from '../config-block.js';

export interface MockConfig {
  model: string;
  /** Pause between streamed lines, to make runs watchable. */
  lineDelayMs: number;
  /** File the runtime appends `start|stop <pid> <ms>` lines to (tests count live agents); null = none. */
  pidLog: string | null;
}

/** Parser of the `mock:` block. */
export const mockBlock = defineBlock(
  'mock',
  z.object({
    model: z.string().min(1).default('mock-model'),
    line_delay_ms: z.number().int().min(0).default(0),
    pid_log: z.string().min(1).optional(),
  }),
  (v): MockConfig => ({ model: v.model, lineDelayMs: v.line_delay_ms, pidLog: v.pid_log ?? null }),
);
