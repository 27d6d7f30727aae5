// `npm start`'s entry: turns Node's compile cache on and, on the embedded default, begins making a new database's data
// folder, then loads the all-in-one process (run.ts) through the cache while libuv's threads write the folder's files.
// Node 24 runs the TypeScript sources through its type stripper and compiles every module on each start; with the
// cache, a later start loads their stored forms instead. NODE_COMPILE_CACHE (the image sets it) wins; else the cache
// is node_modules/.cache/sandbox-rewards/node-compile-cache, as the launcher's (services/launcher/tools/processes.ts,
// programCompileCache). Node keys the entries by file content and its own version: a changed file is compiled again.
// Figures: docs/benchmarks.md, "The embedded default's start" (npm run bench:start).
import { enableCompileCache, flushCompileCache } from 'node:module';
import { resolve } from 'node:path';

enableCompileCache(
  process.env.NODE_COMPILE_CACHE ||
    new URL('../../../node_modules/.cache/sandbox-rewards/node-compile-cache', import.meta.url).pathname,
);
if (!process.env.DATABASE_URL) {
  // The folder system.ts opens (DATA_DIR, default ./.data); startEmbeddedPostgres awaits this same making, and
  // reports its error if it fails (a failure here is only caught, not reported twice).
  const { embeddedDataFolder, initializeEmbeddedData } = await import('#runtime/db/embedded-data.ts');
  initializeEmbeddedData(embeddedDataFolder(resolve(process.env.DATA_DIR || './.data'))).catch(() => undefined);
}
await import('./run.ts');
// Every module a start loads is loaded now: their compiled forms go to the cache (as runStandalone does).
flushCompileCache();
