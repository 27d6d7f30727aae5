// `npm start`'s entry: on the embedded default, begins making a new database's data folder (the template unpacked by
// a worker thread), then loads the all-in-one process (run.ts) meanwhile: the folder's files are written while the
// modules load. Figures: docs/benchmarks.md, "The embedded default's start" (npm run bench:start).
import { resolve } from 'node:path';

if (!process.env.DATABASE_URL) {
  // The folder system.ts opens (DATA_DIR, default ./.data); startEmbeddedPostgres awaits this same making, and
  // reports its error if it fails (a failure here is only caught, not reported twice).
  const { assertEmbeddedTemplate, embeddedDataFolder, initializeEmbeddedData } = await import(
    '#runtime/db/embedded-data.ts'
  );
  const folder = embeddedDataFolder(resolve(process.env.DATA_DIR || './.data'));
  try {
    // A new folder without a built template: the message says how to build it, before anything starts.
    assertEmbeddedTemplate(folder);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  initializeEmbeddedData(folder).catch(() => undefined);
}
await import('./run.ts');
