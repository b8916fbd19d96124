/**
 * `orchestrator validate WORKFLOW.example.md` wall time against `node -e 0`, the
 * floor any Node CLI pays. Target: at most 2.5× (heavy modules load lazily), and the aim
 * under 2.0×. The ratio is printed unrounded, so a figure just over a bound is not read as met.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { median, timeCommand } from './stats.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const RUNS = 10;
const TARGET_RATIO = 2.5;
const AIM_RATIO = 2.0;

export function validateStartup(): void {
  const main = path.join(ROOT, 'dist', 'cli', 'main.js');
  if (!existsSync(main)) throw new Error('dist/cli/main.js is missing: run `make build` first');
  // One warm-up each, so the file cache is equally warm for both.
  timeCommand(process.execPath, ['-e', '0'], ROOT);
  timeCommand(process.execPath, [main, 'validate', 'WORKFLOW.example.md'], ROOT);
  const bare: number[] = [];
  const validate: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    bare.push(timeCommand(process.execPath, ['-e', '0'], ROOT));
    validate.push(timeCommand(process.execPath, [main, 'validate', 'WORKFLOW.example.md'], ROOT));
  }
  const ratio = median(validate) / median(bare);
  console.log(`node -e 0:                       median ${median(bare).toFixed(1)} ms over ${RUNS} runs`);
  console.log(`orchestrator validate (example): median ${median(validate).toFixed(1)} ms over ${RUNS} runs`);
  console.log(
    `ratio ${ratio}x (target <= ${TARGET_RATIO}x ${ratio <= TARGET_RATIO ? 'MET' : 'MISSED'}; ` +
      `aim < ${AIM_RATIO}x ${ratio < AIM_RATIO ? 'MET' : 'MISSED'})`,
  );
}
