/**
 * The `echo:` block: how long the simulated run takes and how often it fails.
 */
import { z } from 'zod';
import { defineBlock } from '../config-block.js';

export interface EchoConfig {
  /** Total simulated run time, spread over three steps. */
  delayMs: number;
  /** Fraction of runs, 0..1, that fail. */
  failRate: number;
}

/** Parser of the `echo:` block. */
export const echoBlock = defineBlock(
  'echo',
  z.object({
    delay_ms: z.number().int().min(0).default(1500),
    fail_rate: z.number().min(0).max(1).default(0),
  }),
  (v): EchoConfig => ({ delayMs: v.delay_ms, failRate: v.fail_rate }),
);
