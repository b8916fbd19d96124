// Builds dist/cli/orchestrator.cjs: the CLI program and the libraries every command
// loads (zod, yaml, liquidjs, commander) in one file, plus its V8 code cache, so a
// `validate` step in CI starts close to Node's own start-up time. Every other
// package stays external and is loaded only by the command that needs it.
// Run after `tsc`; dist/cli/main.js uses the bundle when it is present.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const outfile = path.join(dist, 'cli', 'orchestrator.cjs');
const BUNDLED_PACKAGES = new Set(['zod', 'yaml', 'liquidjs', 'commander']);

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Each module keeps its own import.meta.url/dirname, relative to where the bundle lives. */
const importMetaPlugin = {
  name: 'import-meta',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point' || args.path.startsWith('node:')) return undefined;
      return BUNDLED_PACKAGES.has(packageName(args.path)) ? undefined : { path: args.path, external: true };
    });
    b.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(dist)) return undefined;
      const rel = path.relative(path.dirname(outfile), args.path).split(path.sep).join('/');
      const relDir = path.posix.dirname(rel);
      const contents = readFileSync(args.path, 'utf8')
        .replaceAll(
          'import.meta.url',
          `require("node:url").pathToFileURL(require("node:path").join(__dirname, ${JSON.stringify(rel)})).href`,
        )
        .replaceAll('import.meta.dirname', `require("node:path").join(__dirname, ${JSON.stringify(relDir)})`)
        .replaceAll(
          'import.meta.resolve(',
          '((s) => require("node:url").pathToFileURL(require.resolve(s)).href)(',
        );
      return { contents, loader: 'js' };
    });
  },
};

rmSync(`${outfile}.cache`, { force: true });
await build({
  entryPoints: [path.join(dist, 'cli', 'program.js')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
  plugins: [importMetaPlugin],
});

// One representative run writes the code cache. Its report is shown only when it fails: a
// build that printed a validate report read as a second `validate` step in `make run`.
const run = spawnSync(
  process.execPath,
  [path.join(dist, 'cli', 'main.js'), 'validate', 'WORKFLOW.example.md'],
  {
    cwd: root,
    env: { ...process.env, ORCHESTRATOR_WRITE_CODE_CACHE: '1' },
    encoding: 'utf8',
  },
);
if (run.status !== 0) {
  process.stderr.write(`${run.stdout ?? ''}${run.stderr ?? ''}`);
  console.error('bundle-cli: the cache-writing run failed');
  process.exit(1);
}
