/** Filling a small file system (a tmpfs a test mounted) to its last byte, for disk-full faults. */
import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Writes one file in `dir` until the file system refuses another byte; returns its path. */
export function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    // Smaller and smaller writes take the last blocks a large one cannot.
    for (let size = chunk.length; size >= 512; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch {
        size >>= 1;
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}
