// The embedded PostgreSQL's data folder (embedded.ts): made on a first start from the template that `npm ci` built
// (the `prepare` script runs `npm run embedded:template`; the image builds it in a stage of its own). Apart from embedded.ts so that `npm start` (services/all-in-one/src/main.ts) can begin making it
// before it loads the rest of the process (PGlite included): the template is unpacked by a worker thread meanwhile.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';

/** The PGlite data folder under DATA_DIR. */
export function embeddedDataFolder(dataDir: string): string {
  return join(dataDir, 'pglite');
}

/**
 * Where the data folder of a new database is kept as a gzipped tarball for the installed PGlite version, every
 * migration applied: built, not in git, by `npm run embedded:template` (services/all-in-one/src/make-embedded-template.ts),
 * which `npm ci` and `npm install` run through the `prepare` script. Unpacking it takes a fraction of initdb's time
 * and memory: PGlite runs initdb in a second PostgreSQL instance beside the first (figures: docs/benchmarks.md, "The
 * embedded database's first start").
 */
export function embeddedTemplateFile(): string {
  return fileURLToPath(new URL(`./embedded-template/pglite-${pgliteVersion()}.tar.gz`, import.meta.url));
}

/** The built template of the installed PGlite version (embeddedTemplateFile), or undefined when it was not built. */
export function embeddedTemplatePath(): string | undefined {
  const path = embeddedTemplateFile();
  return existsSync(path) ? path : undefined;
}

/**
 * A new data folder is needed and the installed PGlite has no built template: `npm ci` ran without its `prepare`
 * script (--ignore-scripts), or PGlite was upgraded by `npm install <package>`, which runs none. The start fails with
 * this message rather than run initdb, which holds far more memory and takes seconds more (docs/decisions.md, "The
 * embedded template is built, not committed").
 */
export class EmbeddedTemplateMissingError extends Error {
  readonly file: string;

  constructor(file: string) {
    super(
      `A new embedded database is made from its template, and the template for PGlite ${pgliteVersion()} is not ` +
        `built (${file} is missing). Build it with \`npm run embedded:template\` (\`npm ci\` runs it), or set ` +
        'DATABASE_URL to use a PostgreSQL server.',
    );
    this.name = 'EmbeddedTemplateMissingError';
    this.file = file;
  }
}

/** The installed PGlite's version (its package.json). */
export function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  const manifest = join(dirname(entry), '..', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** Throws EmbeddedTemplateMissingError when `folder` is to be made (no PG_VERSION) and no template is built. */
export function assertEmbeddedTemplate(folder: string): void {
  if (!existsSync(join(folder, 'PG_VERSION')) && !embeddedTemplatePath()) {
    throw new EmbeddedTemplateMissingError(embeddedTemplateFile());
  }
}

/**
 * Makes the PGlite data folder `folder` when it holds none yet (no PG_VERSION: new, or left half-made by an
 * interrupted first start, which is made again) into a sibling folder, renamed into place only when complete: from
 * the built template of this PGlite version, unpacked by a worker thread (a gzipped tarball of the folder: no
 * PostgreSQL instance is needed to write its files; the thread's own event loop, so that the unpacking goes on while
 * this thread loads modules, which leaves its event loop few turns). Without a built template it rejects with
 * EmbeddedTemplateMissingError; a folder that exists is opened without one.
 */
export function initializeEmbeddedData(folder: string): Promise<void> {
  // One making per folder at a time: `npm start` begins it early, the embedded server's start awaits the same.
  let making = inProgress.get(folder);
  if (!making) {
    making = makeEmbeddedData(folder).finally(() => inProgress.delete(folder));
    inProgress.set(folder, making);
  }
  return making;
}

const inProgress = new Map<string, Promise<void>>();

async function makeEmbeddedData(folder: string): Promise<void> {
  if (existsSync(join(folder, 'PG_VERSION'))) return;
  rmSync(folder, { recursive: true, force: true });
  const template = embeddedTemplatePath();
  if (!template) throw new EmbeddedTemplateMissingError(embeddedTemplateFile());
  const making = newFolder(folder);
  await unpackTemplateInWorker(template, making);
  renameSync(making, folder);
}

/**
 * initdb of a new PGlite data folder `folder`, in a short-lived child process (embedded-new-data.ts), so that the
 * memory initdb grows (WebAssembly memory never shrinks) goes back to the system when it exits: how
 * `npm run embedded:template` begins.
 */
export async function initdbInChild(folder: string): Promise<void> {
  const making = newFolder(folder);
  const script = new URL('./embedded-new-data.ts', import.meta.url).pathname;
  await new Promise<void>((resolve, reject) => {
    // --liftoff-only: no optimizing compiles of PGlite's WebAssembly (they held about 500 MiB at initdb's peak).
    const child = spawn(process.execPath, ['--liftoff-only', script, making], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0 && existsSync(join(making, 'PG_VERSION'))) resolve();
      else reject(new Error(`the embedded PostgreSQL's new folder ${making} failed (exit ${code}): ${stderr}`));
    });
  });
  renameSync(making, folder);
}

/** `<folder>.new`, empty: where a new data folder is made before it is renamed into place. */
function newFolder(folder: string): string {
  const making = `${folder}.new`;
  rmSync(making, { recursive: true, force: true });
  mkdirSync(making, { recursive: true, mode: 0o700 });
  return making;
}

/** unpackTemplate of the file `template` into `folder`, in a worker thread (embedded-unpack-worker.ts). */
export function unpackTemplateInWorker(template: string, folder: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // No execArgv: the worker needs none of the process's flags (the tracing --import among them).
    const worker = new Worker(new URL('./embedded-unpack-worker.ts', import.meta.url), {
      workerData: { template, folder },
      execArgv: [],
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`unpacking the embedded template into ${folder} failed (worker exit ${code})`));
    });
  });
}

/** The size of a tar block: headers and each file's data (padded) come in blocks of 512 bytes. */
const TAR_BLOCK_BYTES = 512;

/**
 * Writes the files and folders of a gzipped tarball (ustar, as `npm run embedded:template` packs it) under `folder`,
 * owner-only (a database's files). Synchronous: it runs in a worker thread of its own. Modification times are not
 * kept: PostgreSQL reads none, and each would be one more system call per file. Throws on an entry type other than
 * a file or a folder, or on a path that would leave `folder`.
 */
export function unpackTemplate(tarball: Buffer, folder: string): void {
  const tar = gunzipSync(tarball);
  const folders = new Set<string>();
  const folderOf = (path: string) => {
    if (!folders.has(path)) mkdirSync(path, { recursive: true, mode: 0o700 });
    folders.add(path);
  };
  const text = (from: number, length: number) => {
    const end = tar.indexOf(0, from);
    return tar.toString('latin1', from, end === -1 || end > from + length ? from + length : end);
  };
  const octal = (from: number, length: number) => Number.parseInt(text(from, length).trim() || '0', 8);
  for (let at = 0; at + TAR_BLOCK_BYTES <= tar.length; ) {
    const name = text(at, 100);
    if (!name) break; // the two zero blocks that end the archive
    const prefix = tar.toString('latin1', at + 257, at + 262) === 'ustar' ? text(at + 345, 155) : '';
    const path = normalize(`${prefix ? `${prefix}/` : ''}${name}`).replace(/^\/+/, '');
    const size = octal(at + 124, 12);
    const type = String.fromCharCode(tar[at + 156] ?? 0);
    if (path.startsWith('..')) throw new Error(`the embedded template's entry ${name} leaves its folder`);
    const target = join(folder, path);
    const data = at + TAR_BLOCK_BYTES;
    if (type === '5') {
      folderOf(target);
    } else if (type === '0' || type === '\0') {
      folderOf(dirname(target));
      writeFileSync(target, tar.subarray(data, data + size), { mode: 0o600 });
    } else {
      throw new Error(`the embedded template's entry ${name} is of type ${JSON.stringify(type)}, not a file or folder`);
    }
    at = data + Math.ceil(size / TAR_BLOCK_BYTES) * TAR_BLOCK_BYTES;
  }
}
