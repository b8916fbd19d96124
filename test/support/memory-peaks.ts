/**
 * Peaks of a process's own memory while some work runs, for measuring children of tests and
 * benches. Heap used between collections mostly shows how lazily garbage is collected; with
 * `--expose-gc` the sampler also collects first now and then, and that "live" peak is what
 * the work actually keeps.
 */

/** Peak figures in bytes; `liveHeapBytes` is null without `--expose-gc`. */
export interface MemoryPeaks {
  heapBytes: number;
  rssBytes: number;
  liveHeapBytes: number | null;
}

const SAMPLE_INTERVAL_MS = 20;
/** Every this many samples, a full collection first (when `gc` is exposed). */
const LIVE_EVERY_SAMPLES = 10;

/** Starts sampling; `stop` ends it and returns the peaks. */
export function sampleMemoryPeaks(): { stop(): MemoryPeaks } {
  const gc = (globalThis as { gc?: () => void }).gc;
  const peaks: MemoryPeaks = { heapBytes: 0, rssBytes: 0, liveHeapBytes: gc === undefined ? null : 0 };
  let samples = 0;
  const sample = () => {
    samples += 1;
    const usage = process.memoryUsage();
    peaks.heapBytes = Math.max(peaks.heapBytes, usage.heapUsed);
    peaks.rssBytes = Math.max(peaks.rssBytes, usage.rss);
    if (gc !== undefined && samples % LIVE_EVERY_SAMPLES === 0) {
      gc();
      peaks.liveHeapBytes = Math.max(peaks.liveHeapBytes ?? 0, process.memoryUsage().heapUsed);
    }
  };
  const timer = setInterval(sample, SAMPLE_INTERVAL_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}
