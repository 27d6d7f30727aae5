// One PGlite data folder made (initdb) once per test run, copied into the DATA_DIR of every embedded test system:
// initdb of PGlite is seconds of CPU on an idle machine and a minute on a loaded one, opening a copy a fraction of it.
// The global setup starts making it in the background; test systems wait for it with a deadline.
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const READY = 'pglite';
const BUILDING = 'pglite-building';

/** Starts initdb of the template in a child process; answers the folder (ready when `<folder>/pglite` exists). */
export function startTemplate(): { folder: string; child: ChildProcess } {
  const folder = mkdtempSync(join(tmpdir(), 'rewards-pglite-template-'));
  const script = new URL('../../services/runtime/src/db/embedded-initdb.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, [script, join(folder, BUILDING)], { stdio: 'ignore' });
  child.once('exit', (code) => {
    if (code === 0 && existsSync(join(folder, BUILDING, 'PG_VERSION')))
      renameSync(join(folder, BUILDING), join(folder, READY));
  });
  return { folder, child };
}

export async function stopTemplate(template: { folder: string; child: ChildProcess } | undefined): Promise<void> {
  if (!template) return;
  if (template.child.exitCode === null) template.child.kill('SIGKILL');
  rmSync(template.folder, { recursive: true, force: true });
}

/**
 * Copies the run's template into `dataDir/pglite` when there is one (TEST_PGLITE_TEMPLATE), waiting for it to be
 * made; without a template (or when making it failed) the system makes its own folder as `npm start` does.
 */
export async function seedEmbeddedData(dataDir: string, timeoutMs = 300_000): Promise<void> {
  const folder = process.env.TEST_PGLITE_TEMPLATE;
  if (!folder) return;
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(join(folder, READY))) {
    if (!existsSync(join(folder, BUILDING)) && !existsSync(folder)) return;
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  cpSync(join(folder, READY), join(dataDir, 'pglite'), { recursive: true });
}
