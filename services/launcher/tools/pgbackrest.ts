// pgBackRest with a local repository, for a throwaway PostgreSQL of servers.ts: the process topology's backups
// (docs/operations.md, "Backing up"). The fault suite's `restore` phase and load/bench-restore.ts use it: WAL archived
// by archive_command (archive-push), full and incremental backups, and a restore to a point in time into a new data
// directory, started on the old one's port. Runs pgBackRest and PostgreSQL as the `postgres` user when this process
// is root. Tools for a development or CI machine, never part of a program.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { findBinary, findPostgresBin } from './servers.ts';

export const STANZA = 'rewards';

export interface PgBackRestSettings {
  /** archive_timeout of the server, in seconds: a WAL segment is archived at most this long after it was begun. */
  archiveTimeoutSeconds: number;
}

export interface BackupInfo {
  label: string;
  type: 'full' | 'incr' | 'diff';
  /** Wall time of the backup command. */
  ms: number;
  /** The database's size as the backup saw it, and what was copied (bytes). */
  size: number;
  delta: number;
}

export interface RestoredPostgres {
  dataDir: string;
  port: number;
  url: string;
  /** Figures of the restore: files written, WAL replayed until the target, promoted. */
  restoreMs: number;
  recoveryMs: number;
  stop(): void;
}

export interface PgBackRest {
  /** The server settings (`name=value`) that archive WAL into the repository: give them to startPostgres. */
  serverSettings: string[];
  /** Binds the repository to the started server (its data directory, port, socket) and creates the stanza. */
  attach(server: { dataDir: string; port: number }): Promise<void>;
  backup(type: 'full' | 'incr' | 'diff'): Promise<BackupInfo>;
  /**
   * Restores the newest backup before `target` into a new data directory and replays the archived WAL until
   * `target` (recovery_target_time, inclusive), then promotes; starts PostgreSQL on `port` with the same settings and
   * resolves once it accepts writes. The repository's server becomes the restored one (its WAL is archived on a new
   * timeline).
   */
  restoreTo(target: string, port: number, extraSettings?: string[]): Promise<RestoredPostgres>;
  /** `pgbackrest info` as JSON. */
  info(): Promise<unknown>;
  /** Removes the repository and every restored directory (their servers stopped first). */
  remove(): void;
}

const execFileAsync = promisify(execFile);

function findPgBackRest(): string {
  const found = findBinary('pgbackrest');
  if (found) return found;
  throw new Error('pgbackrest not found. Install it with `apt-get install pgbackrest`.');
}

/** A repository under a new temporary folder, owned by `postgres` when root. */
export function createPgBackRest(settings: PgBackRestSettings): PgBackRest {
  const binary = findPgBackRest();
  const pgBin = findPostgresBin();
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot
    ? {
        uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
        gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
      }
    : undefined;
  const base = mkdtempSync(join(tmpdir(), 'rewards-pgbackrest-'));
  const dirs = ['repo', 'log', 'lock', 'spool'].map((d) => join(base, d));
  for (const dir of [base, ...dirs]) {
    mkdirSync(dir, { recursive: true });
    if (owner) chownSync(dir, owner.uid, owner.gid);
  }
  const configPath = join(base, 'pgbackrest.conf');
  // Asynchronous: a backup takes seconds, and whoever runs one (the fault suite's load) keeps going meanwhile.
  const run = async (program: string, args: string[], timeoutMs = 3_600_000): Promise<string> => {
    const command = asRoot ? 'runuser' : program;
    const full = asRoot ? ['-u', 'postgres', '--', program, ...args] : args;
    try {
      const { stdout } = await execFileAsync(command, full, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
      return stdout;
    } catch (error) {
      const e = error as Error & { stderr?: string };
      throw new Error(`${program} ${args.join(' ')}: ${(e.stderr || e.message).trim()}`);
    }
  };
  const pgbackrest = (args: string[]) => run(binary, [`--config=${configPath}`, `--stanza=${STANZA}`, ...args]);
  let server: { dataDir: string; port: number } | undefined;
  const restored: RestoredPostgres[] = [];

  const writeConfig = (dataDir: string, port: number) => {
    writeFileSync(
      configPath,
      [
        '[global]',
        `repo1-path=${join(base, 'repo')}`,
        'repo1-retention-full=2',
        `log-path=${join(base, 'log')}`,
        `lock-path=${join(base, 'lock')}`,
        `spool-path=${join(base, 'spool')}`,
        'log-level-console=warn',
        'log-level-file=info',
        // A checkpoint at once rather than at the next scheduled one: the backup starts now.
        'start-fast=y',
        'compress-type=lz4',
        'process-max=2',
        '',
        `[${STANZA}]`,
        `pg1-path=${dataDir}`,
        `pg1-port=${port}`,
        `pg1-socket-path=${dirname(dataDir)}`,
        'pg1-user=postgres',
        '',
      ].join('\n'),
    );
    if (owner) chownSync(configPath, owner.uid, owner.gid);
  };

  const serverSettings = [
    'archive_mode=on',
    `archive_command='${binary} --config=${configPath} --stanza=${STANZA} archive-push %p'`,
    `archive_timeout=${settings.archiveTimeoutSeconds}`,
    // The commit time of every transaction (pg_xact_commit_timestamp): the drill's "committed at or before T".
    'track_commit_timestamp=on',
  ];

  return {
    serverSettings,
    async attach(started) {
      server = started;
      writeConfig(started.dataDir, started.port);
      await pgbackrest(['stanza-create']);
      await pgbackrest(['check']);
    },
    async backup(type) {
      if (!server) throw new Error('attach a server first');
      const started = Date.now();
      await pgbackrest([`--type=${type}`, 'backup']);
      const ms = Date.now() - started;
      const info = JSON.parse(await pgbackrest(['--output=json', 'info'])) as Array<{
        backup: Array<{ label: string; type: 'full' | 'incr' | 'diff'; info: { size: number; delta: number } }>;
      }>;
      const last = info[0]!.backup.at(-1)!;
      return { label: last.label, type: last.type, ms, size: last.info.size, delta: last.info.delta };
    },
    async restoreTo(target, port, extraSettings = []) {
      const dir = mkdtempSync(join(base, 'restored-'));
      if (owner) chownSync(dir, owner.uid, owner.gid);
      const dataDir = join(dir, 'data');
      mkdirSync(dataDir, { mode: 0o700 });
      if (owner) chownSync(dataDir, owner.uid, owner.gid);
      const restoreStarted = Date.now();
      await pgbackrest([
        `--pg1-path=${dataDir}`,
        '--type=time',
        `--target=${target}`,
        '--target-action=promote',
        'restore',
      ]);
      const restoreMs = Date.now() - restoreStarted;
      // From now on the repository's server is the restored one: archive-push finds its WAL under its directory.
      writeConfig(dataDir, port);
      const recoveryStarted = Date.now();
      const options = [
        `-p ${port}`,
        `-k ${dir}`,
        '-c listen_addresses=127.0.0.1',
        '-c max_connections=300',
        ...[...serverSettings, ...extraSettings].map((s) => `-c ${s}`),
      ].join(' ');
      await run(join(pgBin, 'pg_ctl'), [
        '-D',
        dataDir,
        '-l',
        join(dir, 'postgres.log'),
        '-w',
        '-t',
        '600',
        '-o',
        options,
        'start',
      ]);
      // pg_ctl -w returns once connections are accepted, which a hot standby does while it still replays: wait for
      // the promotion (the end of recovery) before anything writes.
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      const psql = join(pgBin, 'psql');
      for (;;) {
        const inRecovery = await run(psql, [
          '-h',
          dir,
          '-p',
          String(port),
          '-U',
          'postgres',
          '-Atc',
          'select pg_is_in_recovery()',
        ]);
        if (inRecovery.trim() === 'f') break;
        if (Date.now() - recoveryStarted > 600_000) throw new Error('the restored server did not promote in 10 min');
        await new Promise((r) => setTimeout(r, 50));
      }
      const recoveryMs = Date.now() - recoveryStarted;
      const stop = () => {
        if (existsSync(join(dataDir, 'postmaster.pid'))) {
          try {
            const command = asRoot ? 'runuser' : join(pgBin, 'pg_ctl');
            const args = ['-D', dataDir, '-m', 'immediate', '-w', 'stop'];
            execFileSync(command, asRoot ? ['-u', 'postgres', '--', join(pgBin, 'pg_ctl'), ...args] : args, {
              stdio: 'ignore',
            });
          } catch {
            // already stopped
          }
        }
      };
      const result = { dataDir, port, url, restoreMs, recoveryMs, stop };
      restored.push(result);
      server = { dataDir, port };
      return result;
    },
    async info() {
      return JSON.parse(await pgbackrest(['--output=json', 'info']));
    },
    remove() {
      for (const r of restored) r.stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
