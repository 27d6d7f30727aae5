// The previous release (.ci/previous-release) as the fault suite's `upgrade` phase runs it (docs/reliability.md,
// "Upgrade and rollback"): its tree unpacked from this clone's history with its dependencies by the helper CI's API
// check uses too (.ci/unpack-previous-release.sh), and a release's migrations run the way the chart's hook Job runs
// them (`node services/all-in-one/src/migrate.ts` with DATABASE_URL), as a process of their own.
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { programCompileCache } from '../../services/launcher/tools/processes.ts';

export interface PreviousRelease {
  tag: string;
  commit: string;
  /** The unpacked tree (with node_modules): the programs run from here. */
  root: string;
  /** Removes the unpacked tree. */
  remove(): void;
}

/** Unpacks the previous release into a new temporary folder (git archive; node_modules linked or installed). */
export async function unpackPreviousRelease(): Promise<PreviousRelease> {
  const root = mkdtempSync(join(tmpdir(), 'rewards-previous-'));
  try {
    const { stdout } = await promisify(execFile)('bash', [resolve('.ci/unpack-previous-release.sh'), root], {
      maxBuffer: 16 << 20,
    });
    const [tag = '', commit = ''] = stdout.trim().split(/\s+/);
    return { tag, commit, root, remove: () => rmSync(root, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    const e = error as Error & { stderr?: string };
    throw new Error(`the previous release could not be unpacked: ${(e.stderr || e.message).trim().split('\n').pop()}`);
  }
}

/**
 * Runs the migrations of the tree at `root` on `databaseUrl`, as the hook Job does (`node
 * services/all-in-one/src/migrate.ts`, Node 24, the tree as working directory); its output is appended to `logPath`.
 * Resolves with when it began and ended; throws when it exits non-zero.
 */
export async function runMigrations(
  root: string,
  databaseUrl: string,
  logPath: string,
): Promise<{ startedAt: number; endedAt: number }> {
  const log = createWriteStream(logPath, { flags: 'a' });
  const startedAt = Date.now();
  log.write(`--- ${new Date(startedAt).toISOString()} migrate (code in ${root})\n`);
  const child = spawn(process.execPath, [join(root, 'services/all-in-one/src/migrate.ts')], {
    cwd: root,
    // Node's compile cache, as the programs have it (the image's too): no type stripping of every module again.
    env: {
      PATH: process.env.PATH ?? '',
      NODE_COMPILE_CACHE: programCompileCache(),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
      log.write(chunk);
    });
  }
  const code = await new Promise<number | null>((done, fail) => {
    child.once('error', fail);
    child.once('close', (exit) => done(exit));
  });
  const endedAt = Date.now();
  await new Promise<void>((done) => log.end(`--- exit ${code} after ${endedAt - startedAt} ms\n`, () => done()));
  if (code !== 0) throw new Error(`the migrations of ${root} exited ${code}: ${output.trim().split('\n').pop()}`);
  return { startedAt, endedAt };
}
