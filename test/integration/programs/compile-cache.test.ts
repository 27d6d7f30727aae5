// Node's compile cache for the programs (services/runtime/src/compile-cache.ts): an entry run with
// --warm-compile-cache fills it and starts nothing, as the image's build does; a program that became ready writes
// what it loaded, so that the next process of the same files needs no type stripper; without NODE_COMPILE_CACHE the
// flag is refused with a message naming the variable.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROGRAM_ENTRIES, warmCompileCache } from '../../../services/launcher/tools/processes.ts';
import { WARM_COMPILE_CACHE_FLAG } from '../../../services/runtime/src/compile-cache.ts';
import { runScript } from '../../support/cli.ts';
import { startProgram } from '../../support/processes.ts';
import { startNats } from '../../support/servers.ts';

/** The cache entries under a compile cache folder (Node keeps them in a folder per Node version and flags). */
function entries(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

const newFolder = () => mkdtempSync(join(tmpdir(), 'rewards-compile-cache-'));

test('--warm-compile-cache fills the cache for a state owner and an edge, and starts nothing', async () => {
  const folder = newFolder();
  const previous = process.env.NODE_COMPILE_CACHE;
  process.env.NODE_COMPILE_CACHE = folder;
  try {
    // No NATS_URL, no DATABASE_URL: a start would refuse the configuration; the warm-up needs neither.
    await warmCompileCache(['ledger', 'ingest', 'all-in-one']);
  } finally {
    if (previous === undefined) delete process.env.NODE_COMPILE_CACHE;
    else process.env.NODE_COMPILE_CACHE = previous;
  }
  // Every module of both programs: far more than their entries (the ledger's database code included).
  expect(entries(folder).length).toBeGreaterThan(100);
});

test('without NODE_COMPILE_CACHE the flag is refused, naming the variable', async () => {
  const result = await runScript(PROGRAM_ENTRIES.ingest, [WARM_COMPILE_CACHE_FLAG], {});
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('NODE_COMPILE_CACHE is not set');
});

test('a program writes the modules it loaded to the cache once it is ready', async () => {
  const nats = await startNats();
  const folder = newFolder();
  try {
    const ingest = await startProgram('ingest', { NATS_URL: nats.url, NODE_COMPILE_CACHE: folder });
    try {
      expect(entries(folder).length).toBeGreaterThan(50);
    } finally {
      await ingest.stop();
    }
  } finally {
    await nats.stop();
  }
}, 120_000);
