// k6 for the load runs, at the version pinned in .ci/go-tools.txt (k6 is on neither npm nor Debian; the Go module
// proxy builds it). Runs load/ingest.js with the given environment and reads its JSON summary.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, rssMiB } from './proc.ts';

/**
 * The k6 binary: the K6 variable, else the version pinned in .ci/go-tools.txt, built once by .ci/go-tool.sh with
 * `go install` into its own cache folder (minutes, once per version).
 */
export function ensureK6(log: (line: string) => void): string {
  if (process.env.K6) return process.env.K6;
  const script = fileURLToPath(new URL('../../.ci/go-tool.sh', import.meta.url));
  log('k6: the version pinned in .ci/go-tools.txt (built once with go install when missing)');
  return execFileSync('bash', [script, 'k6'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

export function k6Version(k6: string): string {
  try {
    return execFileSync(k6, ['version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    return 'k6 (version unknown)';
  }
}

/** k6's end-of-test data (what handleSummary is given): each metric's values (count, rate, med, p(99), ...). */
export interface K6Summary {
  metrics?: Record<string, { values?: Record<string, number>; thresholds?: Record<string, { ok: boolean }> }>;
  /** What setup() returned (load/ingest.js reads it back with SETUP_DATA). */
  setup_data?: unknown;
}

export interface K6Result {
  exitCode: number;
  /** The JSON summary handleSummary wrote; undefined when k6 wrote none. */
  summary: K6Summary | undefined;
  /** k6's own peak RSS (MiB) and CPU seconds. */
  peakRssMiB: number;
  cpuS: number;
}

/**
 * Runs `k6 run load/ingest.js` (or `script`) with env added to this process's environment; output goes to this
 * terminal.
 */
export async function runK6(
  k6: string,
  env: Record<string, string>,
  options: {
    resultsDir: string;
    profile: string;
    /** The k6 script; default load/ingest.js. It writes RESULTS_DIR/PROFILE-summary.json in handleSummary. */
    script?: string;
    /** k6's --quiet (no progress bars); default: when stdout is not a terminal. */
    quiet?: boolean;
    /** Called with every line k6 writes to stderr (its log, console.log of the script); the line is also echoed. */
    onLogLine?: (line: string) => void;
    /** Called with k6's process id once it runs. */
    onStart?: (pid: number) => void;
  },
): Promise<K6Result> {
  const quiet = options.quiet ?? !process.stdout.isTTY;
  const child = spawn(k6, ['run', ...(quiet ? ['--quiet'] : []), options.script ?? 'load/ingest.js'], {
    env: { ...process.env, ...env, RESULTS_DIR: options.resultsDir, PROFILE: options.profile },
    stdio: ['ignore', 'inherit', options.onLogLine ? 'pipe' : 'inherit'],
  });
  if (child.pid) options.onStart?.(child.pid);
  if (options.onLogLine && child.stderr) {
    const onLine = options.onLogLine;
    createInterface({ input: child.stderr }).on('line', (line) => {
      process.stderr.write(`${line}\n`);
      onLine(line);
    });
  }
  let peak = 0;
  let cpu = 0;
  const sample = () => {
    if (!child.pid) return;
    const rss = rssMiB(child.pid);
    if (Number.isFinite(rss)) peak = Math.max(peak, rss);
    cpu = Math.max(cpu, cpuSeconds(child.pid));
  };
  const timer = setInterval(sample, 1000);
  const exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  clearInterval(timer);
  const file = join(options.resultsDir, `${options.profile}-summary.json`);
  const summary = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
  return { exitCode, summary, peakRssMiB: peak, cpuS: cpu };
}
