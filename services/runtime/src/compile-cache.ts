// Node's compile cache for the programs (NODE_COMPILE_CACHE). Node 24 runs the TypeScript sources through its type
// stripper, a WebAssembly module that holds its memory for the life of the process once loaded; a program whose
// every file is in the compile cache never loads it (docs/benchmarks.md, "Memory"). Its own module, without
// imports of the program code, so that the launcher can name the flag without loading a program's dependencies.
import { flushCompileCache, getCompileCacheDir } from 'node:module';

/** The argument of a program's entry that warms Node's compile cache instead of starting (warmCompileCache). */
export const WARM_COMPILE_CACHE_FLAG = '--warm-compile-cache';

/**
 * `node <flags> <entry> --warm-compile-cache`, with NODE_COMPILE_CACHE set (runStandalone): the entry has loaded the
 * program's modules; this loads what a start loads besides (the database code, for a state owner), writes their
 * compiled forms to the cache and returns without starting anything. The image runs it at build time (Dockerfile);
 * the benchmarks before they start the programs (services/launcher/tools/processes.ts, warmCompileCache).
 */
export async function warmCompileCache(program: string, stateOwner: boolean): Promise<void> {
  if (getCompileCacheDir() === undefined) {
    console.error(`${WARM_COMPILE_CACHE_FLAG}: NODE_COMPILE_CACHE is not set (or the cache could not be enabled)`);
    process.exit(2);
  }
  if (stateOwner) await import('./db/database.ts');
  flushCompileCache();
  console.log(`${program}: compile cache written to ${getCompileCacheDir()}`);
}
