/**
 * Cost of the file tracker over a large issues file: 50,000 issues (BENCH_FILE_ISSUES) as
 * about 25 MB of indented JSON. Prints the median and worst wall time of candidate fetches,
 * reads by id, state readings, transitions and comments, and the heap and RSS after the reads
 * and after the writes (measured in a child `node --expose-gc`, so no other bench's garbage
 * counts). Target: with the file unchanged, a read by id or a state reading under 5 ms and a
 * candidate fetch under 100 ms; a transition under 250 ms (it writes the whole file once).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export async function fileTracker(): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', path.join(ROOT, 'test', 'bench', 'file-tracker-child.ts')],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the measuring process exited ${code}`);
}
