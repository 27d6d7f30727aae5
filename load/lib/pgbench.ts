// pgbench runs for the benchmarks: the binary, one timed run with per-transaction latencies, its CPU and the CPU of
// the database's backends. The scripts are the callers' (the same SQL work as the path they compare against).
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { percentile, sampleBackendCpu } from './proc.ts';

/** One measured side of a comparison (a driver against the service, or pgbench against the database). */
export interface Side {
  /** CPU seconds per component during the measured window. */
  cpuS: Record<string, number>;
  /** Read and write system calls of the measured process during the window (when measured). */
  ledgerSyscalls?: { reads: number; writes: number };
  decisions: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Every measured latency, sorted. */
  latenciesMs: Float64Array;
}

export function findPgbench(): string {
  if (process.env.PGBENCH) return process.env.PGBENCH;
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin'])) {
    try {
      if (dir && readdirSync(dir).includes('pgbench')) return join(dir, 'pgbench');
    } catch {
      // not a folder
    }
  }
  throw new Error('pgbench not found: install postgresql-client or set PGBENCH');
}

export interface PgbenchRun {
  url: string;
  /** The database's name, to find its backends' CPU. */
  database: string;
  /** A pgbench script file. */
  script: string;
  clients: number;
  threads: number;
  seconds: number;
  /** -D variables of the script. */
  defines: Record<string, string | number>;
  /** A folder for the per-transaction logs (they are deleted after reading). */
  dir: string;
  /** False: a warm-up, no logs and no figures. */
  measured: boolean;
  /**
   * pgbench's query protocol (-M): `prepared` (default: named statements, parsed once per connection), `extended`
   * (unnamed statements, parsed and planned on every execution: what the services do with DATABASE_NAMED_STATEMENTS
   * off).
   */
  protocol?: 'prepared' | 'extended';
  /**
   * `-R`: transactions per second scheduled (a Poisson schedule, as an open model offers them); each latency then
   * counts from its transaction's scheduled start, so a queue behind the schedule counts too. Unset: as fast as the
   * clients go (a closed loop).
   */
  rate?: number;
}

/**
 * `pgbench -n -M prepared` (the services prepare their hot statements once per connection: so does pgbench) with
 * the script for `seconds`. Latencies come from pgbench's per-transaction log; CPU of pgbench itself through GNU time
 * when installed, and of the database's backends by sampling /proc.
 */
export async function runPgbench(run: PgbenchRun): Promise<Side> {
  const pgbench = findPgbench();
  const common = [
    '-n',
    '-M',
    run.protocol ?? 'prepared',
    '-c',
    String(run.clients),
    '-j',
    String(run.threads),
    '-f',
    run.script,
  ];
  for (const [name, value] of Object.entries(run.defines)) common.push('-D', `${name}=${value}`);
  if (run.rate !== undefined) common.push('-R', String(run.rate));
  const exec = promisify(execFile);
  if (!run.measured) {
    await exec(pgbench, [...common, '-T', String(run.seconds), run.url], { maxBuffer: 16 * 1024 * 1024 });
    return {
      cpuS: {},
      decisions: 0,
      seconds: run.seconds,
      perSecond: 0,
      p50Ms: 0,
      p99Ms: 0,
      errors: 0,
      latenciesMs: new Float64Array(),
    };
  }
  const logPrefix = join(run.dir, 'pgbench_log');
  const sampler = sampleBackendCpu(run.database);
  const timeFile = join(run.dir, 'pgbench.time');
  const args = [...common, '-T', String(run.seconds), '-l', '--log-prefix', logPrefix, run.url];
  const timed = existsSync('/usr/bin/time');
  const { stdout } = await exec(
    timed ? '/usr/bin/time' : pgbench,
    timed ? ['-f', '%U %S', '-o', timeFile, pgbench, ...args] : args,
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const cpuS: Record<string, number> = { postgres: sampler.stop() };
  if (timed) {
    const [user, system] = readFileSync(timeFile, 'utf8').trim().split(/\s+/).map(Number);
    cpuS.pgbench = (user ?? 0) + (system ?? 0);
  }
  const processed = Number(/number of transactions actually processed: (\d+)/.exec(stdout)?.[1]);
  const failed = Number(/number of failed transactions: (\d+)/.exec(stdout)?.[1] ?? 0);
  const latencies: number[] = [];
  for (const file of readdirSync(run.dir).filter((f) => f.startsWith('pgbench_log'))) {
    for (const line of readFileSync(join(run.dir, file), 'utf8').split('\n')) {
      const latencyUs = line.split(' ')[2];
      if (latencyUs !== undefined) latencies.push(Number(latencyUs) / 1000);
    }
    rmSync(join(run.dir, file)); // each run writes its own logs
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    cpuS,
    decisions: processed,
    seconds: run.seconds,
    perSecond: processed / run.seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    errors: failed,
    latenciesMs: sorted,
  };
}
