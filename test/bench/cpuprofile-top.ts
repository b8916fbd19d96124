/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`, e.g. the service of
 * `BENCH_CPU_PROF=<dir> npm run bench codex-workload`): the top functions by self time, self
 * time per file (dist/ files by path, packages by name, node's own as `node:`), the time of
 * each dist/ module with what it calls in node and packages (every sample goes to its
 * innermost dist/ frame), and the top functions of dist/ by total time (self plus callees,
 * each counted once per sample). Frames of the CLI bundle (dist/cli/orchestrator.cjs) are
 * named by the `// dist/<module>` markers esbuild leaves in it, read from the bundle file.
 *
 *   node --import tsx test/bench/cpuprofile-top.ts <file.cpuprofile> [top=25] [per=N]
 *
 * `per=N` also prints each figure divided by N (ms per issue).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Per bundle file: the line numbers where each module of it starts, and the module's name. */
const bundles = new Map<string, { lines: number[]; names: string[] } | null>();

/** The dist/ module a line of a bundle belongs to, or null when `url` is no bundle with markers. */
function bundleModule(url: string, line: number): string | null {
  if (!url.endsWith('.cjs') || !url.includes('/dist/')) return null;
  let index = bundles.get(url);
  if (index === undefined) {
    index = null;
    try {
      const text = readFileSync(url.startsWith('file:') ? fileURLToPath(url) : url, 'utf8');
      const lines: number[] = [];
      const names: string[] = [];
      text.split('\n').forEach((l, i) => {
        const m = /^\/\/ ((?:dist|node_modules)\/\S+)$/.exec(l.trim());
        if (m !== null) {
          lines.push(i + 1);
          names.push(m[1] as string);
        }
      });
      if (lines.length > 0) index = { lines, names };
    } catch {
      // not readable here: named by the file
    }
    bundles.set(url, index);
  }
  if (index === null) return null;
  let lo = 0;
  let hi = index.lines.length - 1;
  if (line < (index.lines[0] as number)) return '(bundle head)';
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((index.lines[mid] as number) <= line) lo = mid;
    else hi = mid - 1;
  }
  return index.names[lo] as string;
}

/** A short name for where a function lives. */
function place(url: string, line = 0): string {
  if (url === '') return '(native/vm)';
  const module = bundleModule(url, line);
  if (module !== null) return module;
  if (url.startsWith('node:')) return url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return `npm:${pkg[1]}`;
  const dist = /\/dist\/(.*)$/.exec(url);
  if (dist !== null) return `dist/${dist[1]}`;
  return url.replace(/^file:\/\//, '');
}

function main(): void {
  const [file, topArg, perArg] = process.argv.slice(2);
  if (file === undefined) throw new Error('usage: cpuprofile-top.ts <file.cpuprofile> [top] [per=N]');
  const top = Number(topArg ?? 25);
  const per = perArg?.startsWith('per=') ? Number(perArg.slice(4)) : null;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const totalUs = profile.endTime - profile.startTime;
  const key = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'} ${place(n.callFrame.url, n.callFrame.lineNumber + 1)}:${n.callFrame.lineNumber + 1}`;

  const selfByFn = new Map<string, number>();
  const selfByPlace = new Map<string, number>();
  const inclusiveByFn = new Map<string, number>();
  const byModule = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id) as ProfileNode;
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    if (name !== '(program)' && name !== '(garbage collector)') busyUs += us;
    selfByFn.set(key(node), (selfByFn.get(key(node)) ?? 0) + us);
    const where = name.startsWith('(') ? name : place(node.callFrame.url, node.callFrame.lineNumber + 1);
    selfByPlace.set(where, (selfByPlace.get(where) ?? 0) + us);
    // The innermost dist/ frame owns the sample (what it called in node or a package included).
    let owner = name.startsWith('(') ? name : `outside dist/: ${where}`;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at) as ProfileNode;
      if (!frame.callFrame.url.includes('/dist/')) continue;
      owner = place(frame.callFrame.url, frame.callFrame.lineNumber + 1);
      break;
    }
    byModule.set(owner, (byModule.get(owner) ?? 0) + us);
    // Total time: every distinct dist/ function on the stack gets the sample once.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at) as ProfileNode;
      if (!frame.callFrame.url.includes('/dist/')) continue;
      const k = key(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusiveByFn.set(k, (inclusiveByFn.get(k) ?? 0) + us);
    }
  }
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const each = (us: number) => (per === null ? '' : ` ${(us / 1000 / per).toFixed(3).padStart(8)} ms/issue`);
  const gc = selfByPlace.get('(garbage collector)') ?? 0;
  const program = selfByPlace.get('(program)') ?? 0;
  console.log(
    `profile ${(totalUs / 1e6).toFixed(1)} s: idle ${ms(idleUs)} ms, JS ${ms(busyUs)} ms, GC ${ms(gc)} ms, ` +
      `(program) ${ms(program)} ms${per === null ? '' : `; per issue (N=${per}): ${((busyUs + gc + program) / 1000 / per).toFixed(2)} ms non-idle`}`,
  );
  const print = (title: string, map: Map<string, number>) => {
    console.log(`\n${title}`);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
      console.log(`${ms(us)} ms${each(us)}  ${name}`);
  };
  print('self time by function:', selfByFn);
  print('self time by file / package:', selfByPlace);
  print('time by dist/ module, with what it calls outside dist/:', byModule);
  print('total time of dist/ functions (self + callees):', inclusiveByFn);
}

main();
