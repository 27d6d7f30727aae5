// npm run load: starts the service on real PostgreSQL and NATS, runs the k6 script load/ingest.js against it, stops
// everything. CI runs the smoke profile with it; `npm run bench` uses the same pieces (load/lib/). --help for flags.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLoadIdentity } from './lib/identity.ts';
import { ensureK6, k6Version, runK6 } from './lib/k6.ts';
import { type LoadSystem, type SystemMode, startLoadSystem } from './lib/system.ts';

const HELP = `Usage: npm run load -- [options]      (node load/run-k6.ts)

Starts the service on real PostgreSQL and NATS, runs k6 (load/ingest.js) against it, stops everything, and exits
with k6's status (0: every threshold passed; 99: a threshold failed).

Options:
  --profile smoke|full       k6 profile (load/README.md)                              default smoke
  --mode all-in-one|programs the all-in-one process on one port, or the five programs
                             as separate processes (one port each)                     default all-in-one
  --duration D               k6 scenario duration, e.g. 30s or 2m                     default: the profile's
  --rate-limit N             EVENT_RATE_LIMIT_PER_MINUTE of the service                 default 1000000
  --results DIR              k6 summary JSON and the programs' logs                    default load/results
  --help                     this text

Environment:
  DATABASE_URL   PostgreSQL server to use (the run creates and drops its own database there); unset: a throwaway
                 cluster is started (initdb; fsync off, as in the tests)
  NATS_URL       nats-server to use; unset: a throwaway nats-server is started
  K6             k6 binary; unset: the version pinned in .ci/go-tools.txt (built once by .ci/go-tool.sh)
  GAMES, PLAYERS_PER_GAME, INGEST_RATE, REPLAY_RATE, CONSOLE_RATE, BATCH_RATE, BATCH_SIZE, ...   passed to k6 (load/README.md)

The identity providers are real JWKS: an ES256 key pair per provider is made for the run, the service trusts its
public key (DEVELOPER_JWKS / NATIVE_JWKS with issuer and audience), and the developer and native session tokens k6
uses are signed with the private keys. The operator API (ADMIN_TOKEN, random per run) invites the developer and
creates device permits for the native sessions in k6's setup(); native admission runs in enforce mode.
`;

export interface RunOptions {
  profile: 'smoke' | 'full';
  mode: SystemMode;
  duration: string | undefined;
  rateLimit: number;
  resultsDir: string;
}

export function readRunOptions(argv = process.argv.slice(2)): RunOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      profile: { type: 'string' },
      mode: { type: 'string' },
      duration: { type: 'string' },
      'rate-limit': { type: 'string' },
      results: { type: 'string' },
      help: { type: 'boolean' },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const profile = values.profile ?? 'smoke';
  const mode = values.mode ?? 'all-in-one';
  const rateLimit = Number(values['rate-limit'] ?? 1_000_000);
  const problems: string[] = [];
  if (profile !== 'smoke' && profile !== 'full') problems.push('--profile must be smoke or full');
  if (mode !== 'all-in-one' && mode !== 'programs') problems.push('--mode must be all-in-one or programs');
  if (!Number.isInteger(rateLimit) || rateLimit < 1 || rateLimit > 1_000_000) {
    problems.push('--rate-limit must be an integer from 1 to 1000000');
  }
  if (values.duration !== undefined && !/^\d+(ms|s|m|h)$/.test(values.duration)) {
    problems.push('--duration must look like 30s or 2m');
  }
  if (problems.length) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.exit(2);
  }
  return {
    profile: profile as RunOptions['profile'],
    mode: mode as SystemMode,
    duration: values.duration,
    rateLimit,
    resultsDir: resolve(values.results ?? 'load/results'),
  };
}

export const log = (line: string) => process.stderr.write(`[load] ${line}\n`);

/** The native sessions k6 needs: player p of every game is linked with session p. */
export function nativeSessionCount(profile: string): number {
  const players = Number(process.env.PLAYERS_PER_GAME);
  return Number.isInteger(players) && players > 0 ? players : profile === 'smoke' ? 2 : 10;
}

export interface Prepared {
  system: LoadSystem;
  /** Environment for k6. */
  k6Env: Record<string, string>;
}

/** Starts the service with a run's identity providers and operator token; returns k6's environment. */
export async function prepare(
  options: RunOptions,
  extraServiceEnv: Record<string, string> = {},
  cpuProfile?: { dir: string; programs: string[] },
  durable = false,
): Promise<Prepared> {
  const runId = randomBytes(4).toString('hex');
  const identity = await createLoadIdentity(runId, nativeSessionCount(options.profile));
  const adminToken = randomBytes(24).toString('hex');
  const rateLimit = String(options.rateLimit);
  mkdirSync(options.resultsDir, { recursive: true });
  const system = await startLoadSystem({
    mode: options.mode,
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      NATIVE_ADMISSION_MODE: 'enforce',
      EVENT_RATE_LIMIT_PER_MINUTE: rateLimit,
      ...extraServiceEnv,
    },
    logDir: join(options.resultsDir, 'logs'),
    log,
    durable,
    ...(cpuProfile ? { cpuProfile } : {}),
  });
  const k6Env: Record<string, string> = {
    BASE_URL: system.urls.gateway,
    GATEWAY_URL: system.urls.gateway,
    INGEST_URL: system.urls.ingest,
    LINKS_URL: system.urls.links,
    DEV_TOKEN: identity.developerToken,
    NATIVE_TOKENS: JSON.stringify(identity.nativeSessions),
    ADMIN_TOKEN: adminToken,
    EVENT_RATE_LIMIT_PER_MINUTE: rateLimit,
    ...(options.duration ? { DURATION: options.duration } : {}),
  };
  return { system, k6Env };
}

async function main(): Promise<void> {
  const options = readRunOptions();
  const k6 = ensureK6(log);
  log(`${k6Version(k6)}; profile ${options.profile}; service: ${options.mode} on real PostgreSQL and NATS`);
  const { system, k6Env } = await prepare(options);
  let stopping: Promise<void> | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the service`);
      stopping ??= system.stop();
      void stopping.finally(() => process.exit(130));
    });
  }
  let exitCode = 1;
  try {
    const result = await runK6(k6, k6Env, { resultsDir: options.resultsDir, profile: options.profile });
    exitCode = result.exitCode;
    const peaks = Object.entries(system.peakRssMiB())
      .map(([name, mib]) => `${name} ${mib.toFixed(0)} MiB`)
      .join(', ');
    log(`peak RSS: ${peaks}, k6 ${result.peakRssMiB.toFixed(0)} MiB`);
    log(`k6 exited with ${exitCode}${exitCode === 0 ? ' (every threshold passed)' : ''}`);
  } finally {
    stopping ??= system.stop();
    await stopping;
  }
  process.exit(exitCode);
}

if (import.meta.main) await main();
