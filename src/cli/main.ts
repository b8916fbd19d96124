#!/usr/bin/env node
/**
 * The process entry point. A CLI step in CI pays Node's start-up plus the cost
 * of compiling every module it loads, and most of that is compiling the same
 * library code on every run. When the build has produced a single-file bundle of
 * the CLI with a V8 code cache beside it, this loads the bundle with the cache;
 * otherwise (running from source, or a build without the bundle) it imports the
 * program normally. Both paths run the same `main` of program.ts.
 */

// Built-ins are taken with getBuiltinModule, not imported: an ESM import of node:fs builds its
// module facade, which reads every export, and its stream getters load Node's stream modules.
const { existsSync, readFileSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { createRequire } = process.getBuiltinModule('node:module');
const path = process.getBuiltinModule('node:path');
const vm = process.getBuiltinModule('node:vm');

type Main = (argv: readonly string[]) => Promise<number>;

const BUNDLE = path.join(import.meta.dirname, 'orchestrator.cjs');
const CODE_CACHE = `${BUNDLE}.cache`;
/** Set by the build to write the code cache after a representative run. */
const WRITE_CACHE_ENV = 'ORCHESTRATOR_WRITE_CODE_CACHE';

function loadBundle(): Main | null {
  if (!existsSync(BUNDLE)) return null;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(CODE_CACHE);
  } catch {
    cachedData = undefined;
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${readFileSync(BUNDLE, 'utf8')}\n})`;
  const script = new vm.Script(wrapped, {
    filename: BUNDLE,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} as { main?: Main } };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(BUNDLE),
    module,
    BUNDLE,
    path.dirname(BUNDLE),
  );
  if (process.env[WRITE_CACHE_ENV] === '1') {
    // After the run, so functions compiled lazily during it are in the cache too.
    process.once('exit', () => writeFileSync(CODE_CACHE, script.createCachedData()));
  }
  return module.exports.main ?? null;
}

const main: Main = loadBundle() ?? (await import('./program.js')).main;
process.exitCode = await main(process.argv.slice(2));
