// Builds dist/cli/orchestrator.cjs: the CLI program, the `validate` command and the libraries
// it loads (zod, yaml, liquidjs, commander) in one file, plus its V8 code cache, so a
// `validate` step in CI starts close to Node's own start-up time. Every other command gets a
// bundle of its own (dist/cli/<name>-command.cjs), loaded only when that command runs, so
// `validate` never reads their code. Every other package stays external and is loaded only by
// the command that needs it. Run after `tsc`; dist/cli/main.js uses the bundle when present.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const cliDir = path.join(dist, 'cli');
const outfile = path.join(cliDir, 'orchestrator.cjs');
const validateCommand = path.join(cliDir, 'validate-command.js');
const BUNDLED_PACKAGES = new Set(['zod', 'yaml', 'liquidjs', 'commander']);

function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Each module keeps its own import.meta.url/dirname, relative to where the bundles live. */
const importMetaPlugin = {
  name: 'import-meta',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point' || args.path.startsWith('node:')) return undefined;
      return BUNDLED_PACKAGES.has(packageName(args.path)) ? undefined : { path: args.path, external: true };
    });
    b.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(dist)) return undefined;
      const rel = path.relative(cliDir, args.path).split(path.sep).join('/');
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

/**
 * Node built-ins that bundled libraries require at their top but use only on paths `validate`
 * never takes (commander's executable subcommands, liquidjs's hash filters). Each becomes a
 * proxy that requires the module on first use, so start-up does not compile the internal
 * modules behind them. A statement that is no longer found is reported as a warning.
 */
const LAZY_BUILTINS = [
  {
    file: 'node_modules/commander/lib/command.js',
    statement: "const childProcess = require('node:child_process');",
  },
  { file: 'node_modules/liquidjs/dist/liquid.node.js', statement: "var crypto = require('crypto');" },
];

const lazyBuiltinsPlugin = {
  name: 'lazy-builtins',
  setup(b) {
    for (const { file, statement } of LAZY_BUILTINS) {
      const absolute = path.join(root, file);
      b.onLoad({ filter: new RegExp(`${path.basename(file).replaceAll('.', '\\.')}$`) }, (args) => {
        if (args.path !== absolute) return undefined;
        const contents = readFileSync(args.path, 'utf8');
        if (!contents.includes(statement)) {
          return { contents, loader: 'js', warnings: [{ text: `lazy-builtins: "${statement}" not found` }] };
        }
        const [, declaration, id] = /^(\S+ \S+ = )require\((.+)\);$/.exec(statement);
        const lazy = `${declaration}new Proxy({}, { get: (_, key) => require(${id})[key] });`;
        return { contents: contents.replace(statement, lazy), loader: 'js' };
      });
    }
  },
};

/**
 * zod's `z.locales` namespace holds the messages of every language (about 300 kB, a fifth of the
 * validate bundle); nothing here calls `z.locales`, and the default English messages are imported
 * by zod itself, so the namespace keeps English only.
 */
const zodLocalesPlugin = {
  name: 'zod-locales',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

/**
 * Packages that a module on every command's path imports at its top but uses only while
 * running: OpenCode's session-database reader imports better-sqlite3, a native module that cost
 * `validate` more than any other import. Each is required on first use through a stand-in
 * that constructs, calls and reads through to it.
 */
const LAZY_PACKAGES = new Set(['better-sqlite3']);

const lazyPackagesPlugin = {
  name: 'lazy-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (!LAZY_PACKAGES.has(args.path)) return undefined;
      if (args.namespace === 'lazy-package') return { path: args.path, external: true };
      return { path: args.path, namespace: 'lazy-package' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => ({
      contents: `let loaded;
const load = () => (loaded ??= require(${JSON.stringify(args.path)}));
module.exports = new Proxy(function lazyPackage() {}, {
  construct: (_, args) => Reflect.construct(load(), args),
  apply: (_, self, args) => Reflect.apply(load(), self, args),
  get: (_, key) => load()[key],
});`,
      loader: 'js',
    }));
  },
};

/** Command modules (dist/cli/<name>-command.js) the program imports lazily, other than validate. */
const commandEntries = new Set();

/**
 * The validate bundle holds only what the program and `validate` run, since every start reads
 * and holds all of it. A command the program imports lazily gets its own bundle. Any other lazy
 * import (a tracker's client, built only when the service creates a tracker) is left out and
 * points at the tsc output beside the bundle: no path of this bundle reaches it.
 */
const validateOnlyPlugin = {
  name: 'validate-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const target = path.resolve(args.resolveDir, args.path);
      if (target === validateCommand) return undefined;
      if (path.dirname(target) === cliDir && target.endsWith('-command.js')) {
        commandEntries.add(target);
        return { path: `./${path.basename(target, '.js')}.cjs`, external: true };
      }
      return { path: `./${path.relative(cliDir, target).split(path.sep).join('/')}`, external: true };
    });
  },
};

/** Bundles `entry` into `file`, minified but with names kept, as ASCII. */
async function bundle(entry, file, plugins, options = {}) {
  const result = await build({
    ...options,
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Less source to read at every start. Identifiers are not minified, so stack traces keep
    // every function's own name; keepNames would add a __name() call per function and class,
    // run at start-up (about an eighth of validate's instructions), for `.name` values only.
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    plugins: [...plugins, lazyPackagesPlugin, lazyBuiltinsPlugin, zodLocalesPlugin, importMetaPlugin],
    write: false,
  });
  // esbuild leaves non-ASCII in regular expression literals (liquidjs has some). One such
  // character makes the whole source a two-byte string: twice the memory and a slow UTF-8
  // decode at every start. A \u escape means the same in strings, regexes and identifiers.
  const source = result.outputFiles[0].text.replace(
    /[^\x00-\x7f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  writeFileSync(file, source);
}

rmSync(`${outfile}.cache`, { force: true });
await bundle(path.join(cliDir, 'program.js'), outfile, [validateOnlyPlugin], {
  // A command bundle is loaded with require(): on Node 20, import() in a script compiled from
  // a code cache fails ("A dynamic import callback was not specified").
  supported: { 'dynamic-import': false },
});
for (const entry of commandEntries) {
  await bundle(entry, path.join(cliDir, `${path.basename(entry, '.js')}.cjs`), []);
}

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
