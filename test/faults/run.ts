// npm run test:faults: the fault suite (issue #12, docs/reliability.md). The five programs as separate processes on
// a real PostgreSQL (fsync on) and a real nats-server; bounded event load with exact duplicates and conflicting
// copies; one fault at a time in the middle of the load; after each, every answer and the whole database are
// checked. Exits 1 when a check fails. --help for the options.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLoadIdentity } from '../../load/lib/identity.ts';
import {
  CHECK,
  CheckBook,
  checkAgainstRows,
  checkAnswer,
  checkInvariants,
  classifyUnavailableMessage,
  decisionOf,
  differences,
  errorOf,
  type InvariantResult,
  rowKey,
  storedRows,
} from './checks.ts';
import { createFixtures, type Fixtures } from './fixtures.ts';
import { pool, type RunningLoad, type SentRequest, send, startLoad } from './load.ts';
import { type FaultSystem, startFaultSystem } from './system.ts';

const HELP = `Usage: npm run test:faults -- [options]      (node test/faults/run.ts)

Starts PostgreSQL (initdb, fsync on), nats-server and the five programs as separate processes on 127.0.0.1, creates
a world through the public API, then runs one phase per fault: event load, the fault in its middle, load until
the service is back; after each phase every answer is checked, the 503'd events are retried with the same eventId,
the answered events are replayed, and the ledger's invariants are checked in SQL over the whole database.
Prints a table of the figures and every failed check; exits 1 when a check failed.

Options:
  --faults LIST     comma-separated, in this order by default:
                    ${'{FAULTS}'}
  --rate N          events offered per second                      default 80
  --in-flight N     requests outstanding at most                   default 32
  --duplicates F    share of exact duplicates                      default 0.15
  --conflicts F     share of conflicting copies                    default 0.08
  --before-ms N     load before the fault                          default 3000
  --after-ms N      load after the fault ended                     default 6000
  --results DIR     logs of the programs, summary.json, summary.md  default a new folder under the temp folder
  --help            this text
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`[faults ${new Date().toISOString().slice(11, 23)}] ${line}\n`);

/** The edges' NATS request timeout (the product default); the client waits one more second for the 503. */
const NATS_REQUEST_TIMEOUT_MS = 5_000;
const CLIENT_TIMEOUT_MS = NATS_REQUEST_TIMEOUT_MS + 1_000;
/** How soon after a fault ended the service must answer decisions again (the blip has its own bound). */
const RECOVERY_BOUND_MS = 10_000;
const BLIP_MS = 300;
/** After nats-server is back: the clients' reconnect wait (0.5 s) plus 1 s for decisions again, plus 0.5 s margin. */
const NATS_RECOVERY_BOUND_MS = 2_000;

interface FaultOutcome {
  /** When the faulted part was back (restarted and ready, or the server accepting again). */
  endedAt: number;
  note?: string;
}

interface Fault {
  id: string;
  title: string;
  inject(system: FaultSystem, load: RunningLoad): Promise<FaultOutcome>;
  recoveryBoundMs: number;
  /** Extra checks of this fault on the phase's load requests. */
  extra?(book: CheckBook, requests: SentRequest[], faultAt: number, outcome: FaultOutcome): void;
}

const isBad = (r: SentRequest) => r.failure !== undefined || (r.answer!.status !== 200 && r.answer!.status !== 409);

const FAULTS: Fault[] = [
  {
    id: 'ledger-kill',
    title: 'SIGKILL of the ledger while it decides a burst of 16 events, then a restart',
    recoveryBoundMs: RECOVERY_BOUND_MS,
    async inject(system, load) {
      // Killed with transactions in PostgreSQL: those commit although nobody is left to answer.
      load.burst(16);
      await sleep(25);
      await system.kill('ledger');
      await system.restart('ledger');
      return { endedAt: Date.now() };
    },
  },
  {
    id: 'postgres-immediate',
    title: '`pg_ctl stop -m immediate`, 1 s down, `pg_ctl start`',
    recoveryBoundMs: RECOVERY_BOUND_MS,
    async inject(system) {
      system.postgres.stopImmediately();
      await sleep(1_000);
      system.postgres.start();
      return { endedAt: Date.now() };
    },
  },
  {
    id: 'nats-kill',
    title: 'nats-server SIGKILL, 1 s down, restarted on its port',
    // The clients retry the server every 0.5 s (reconnectTimeWait); then decisions within 1 s, as after the blip.
    recoveryBoundMs: NATS_RECOVERY_BOUND_MS,
    async inject(system) {
      await system.killNats();
      await sleep(1_000);
      await system.startNatsAgain();
      return { endedAt: Date.now() };
    },
  },
  {
    id: 'nats-blip',
    title: '0.3 s NATS blip (nats-server SIGKILL, restarted 0.3 s later)',
    recoveryBoundMs: 1_000,
    async inject(system) {
      await system.killNats();
      await sleep(BLIP_MS);
      await system.startNatsAgain();
      return { endedAt: Date.now() };
    },
    extra(book, requests) {
      const name = 'blip: every request answered within 1.3 s (0.3 s blip + 1 s)';
      for (const r of requests) {
        const took = (r.answeredAt ?? Date.now()) - r.sentAt;
        book.check(name, r.failure === undefined && took <= BLIP_MS + 1_000, () => `${r.copy.eventId}: ${took} ms`);
      }
    },
  },
  {
    id: 'second-ledger',
    title: 'a second ledger fails start-up (its HTTP port is taken), 3 times',
    recoveryBoundMs: RECOVERY_BOUND_MS,
    async inject(system) {
      const codes: Array<number | null> = [];
      for (let i = 0; i < 3; i++) {
        codes.push(await system.startExtra('ledger', system.program('ledger').port, 'ledger-second', 60_000));
      }
      return { endedAt: Date.now(), note: `second ledger exit codes ${codes.join(', ')}` };
    },
    extra(book, requests) {
      // The first ledger serves throughout: nothing may be lost to the one that fails.
      const name = 'second ledger: no request lost while a healthy ledger serves (no 503, no timeout)';
      for (const r of requests)
        book.check(
          name,
          !isBad(r),
          () => `${r.copy.eventId} after ${r.answeredAt! - r.sentAt} ms: ${r.failure ?? r.answer?.status}`,
        );
    },
  },
  {
    id: 'identity-kill',
    title: 'SIGKILL of identity-admission, then a restart',
    recoveryBoundMs: RECOVERY_BOUND_MS,
    async inject(system) {
      await system.kill('identity-admission');
      await system.restart('identity-admission');
      return { endedAt: Date.now() };
    },
  },
];

interface PhaseSummary {
  fault: string;
  title: string;
  note?: string;
  sent: Record<string, number>;
  skipped: number;
  answers: Record<string, number>;
  /** The decisions answered (200s), by status or reason. */
  decisions: Record<string, number>;
  unavailable: Record<string, number>;
  faultMs: number;
  unavailableMs: number | null;
  recoveredAfterEndMs: number | null;
  retries: { count: number; ok: number };
  replays: { count: number; ok: number };
  invariants: InvariantResult[];
  checks: Array<{ name: string; passed: number; failed: number; examples: string[] }>;
}

interface Settings {
  rate: number;
  inFlight: number;
  duplicates: number;
  conflicts: number;
  beforeMs: number;
  afterMs: number;
}

async function runPhase(
  system: FaultSystem,
  fixtures: Fixtures,
  connect: () => Promise<pg.Client>,
  fault: Fault | undefined,
  settings: Settings,
): Promise<PhaseSummary> {
  const id = fault?.id ?? 'baseline';
  const book = new CheckBook();
  const load = startLoad(
    {
      ingestUrl: system.urls.ingest,
      fixtures,
      ratePerSecond: settings.rate,
      maxInFlight: settings.inFlight,
      duplicateShare: settings.duplicates,
      conflictShare: settings.conflicts,
      timeoutMs: CLIENT_TIMEOUT_MS,
    },
    id,
  );
  await sleep(settings.beforeMs);
  const faultAt = Date.now();
  let outcome: FaultOutcome = { endedAt: faultAt };
  if (fault) {
    log(`${id}: ${fault.title}`);
    outcome = await fault.inject(system, load);
    log(`${id}: fault over after ${outcome.endedAt - faultAt} ms${outcome.note ? ` (${outcome.note})` : ''}`);
  }
  await sleep(settings.afterMs);
  await load.stop();
  const requests = load.sent;

  for (const r of requests) checkAnswer(book, r);
  // A new connection after the load: the PostgreSQL fault ends any connection made before it.
  const client = await connect();
  const before = await storedRows(
    client,
    requests.map((r) => r.copy.eventId),
  );

  // Every event whose copy got a 503 or no answer is sent again with the same eventId and bytes; a 503 again is
  // retried up to 3 times, 1 s apart.
  const toRetry = requests.filter((r) => r.failure !== undefined || r.answer?.status === 503);
  const retries = await pool(toRetry, 8, async (r) => {
    let retry = await send(system.urls.ingest, r.copy, 'retry', CLIENT_TIMEOUT_MS, r);
    for (let attempt = 1; attempt < 3 && (retry.failure || retry.answer?.status === 503); attempt++) {
      await sleep(1_000);
      retry = await send(system.urls.ingest, r.copy, 'retry', CLIENT_TIMEOUT_MS, r);
    }
    return retry;
  });
  // Every copy answered 200 during the phase is sent again: the answer must be the first answer, replayed.
  const firstAnswers = new Map<string, SentRequest>();
  for (const r of requests) {
    if (decisionOf(r))
      firstAnswers.set(`${r.copy.eventId}/${r.copy.hash}`, firstAnswers.get(`${r.copy.eventId}/${r.copy.hash}`) ?? r);
  }
  const replays = await pool([...firstAnswers.values()], 8, (r) =>
    send(system.urls.ingest, r.copy, 'replay', CLIENT_TIMEOUT_MS, r),
  );
  const after = await storedRows(
    client,
    requests.map((r) => r.copy.eventId),
  );

  const freshIds = new Set<string>();
  for (const r of [...requests, ...retries]) {
    const d = decisionOf(r);
    if (!d || d.replayed) continue;
    book.check(CHECK.oneFresh, !freshIds.has(d.id), () => `${r.copy.eventId}: decision ${d.id} answered fresh twice`);
    freshIds.add(d.id);
  }
  for (const r of requests) checkAgainstRows(book, r, after, before, freshIds);
  let retriesOk = 0;
  for (const r of retries) {
    checkAnswer(book, r);
    checkAgainstRows(book, r, after, after, freshIds);
    const storedBefore = before.get(rowKey(r.copy.gameId, r.copy.eventId));
    const row = after.get(rowKey(r.copy.gameId, r.copy.eventId));
    const d = decisionOf(r);
    let problem: string | undefined;
    if (row && row.hash !== r.copy.hash) {
      // Another copy of the eventId (before or during the retries) is the stored one.
      if (!(r.answer?.status === 409 && errorOf(r)?.code === 'event_conflict')) problem = 'expected 409 event_conflict';
    } else if (!d || !row) {
      problem = 'no decision';
    } else if (storedBefore && !d.replayed) {
      problem = 'the event was stored before the retry, but the answer is not a replay';
    } else if (differences(d, row, r.copy.hash).length > 0) {
      problem = differences(d, row, r.copy.hash).join('; ');
    }
    if (
      book.check(
        CHECK.retries,
        problem === undefined,
        () => `${r.copy.eventId}: ${problem}: ${r.failure ?? JSON.stringify(r.answer?.body).slice(0, 200)}`,
      )
    )
      retriesOk++;
  }
  let replaysOk = 0;
  for (const r of replays) {
    checkAnswer(book, r);
    checkAgainstRows(book, r, after, after, freshIds);
    const first = decisionOf(r.of!)!;
    const d = decisionOf(r);
    const same =
      d?.replayed === true &&
      JSON.stringify({ ...d, replayed: undefined }) === JSON.stringify({ ...first, replayed: undefined });
    if (
      book.check(
        CHECK.replays,
        same,
        () =>
          `${r.copy.eventId}: first ${JSON.stringify(first)}, replay ${r.failure ?? JSON.stringify(r.answer?.body)}`,
      )
    )
      replaysOk++;
  }

  // Recovery: the first answered decision sent after the last failed request.
  const bySent = [...requests].sort((a, b) => a.sentAt - b.sentAt);
  const lastBad = bySent.findLastIndex(isBad);
  let unavailableMs: number | null = 0;
  let recoveredAfterEndMs: number | null = 0;
  if (lastBad >= 0) {
    const firstBad = bySent.find(isBad)!;
    const recovered = bySent.slice(lastBad + 1).find((r) => !isBad(r));
    if (recovered) {
      unavailableMs = recovered.answeredAt! - firstBad.sentAt;
      recoveredAfterEndMs = Math.max(0, recovered.answeredAt! - outcome.endedAt);
    } else {
      unavailableMs = null;
      recoveredAfterEndMs = null;
    }
  }
  if (fault) {
    book.check(
      `${CHECK.recovered} (decisions again within ${fault.recoveryBoundMs / 1000} s of its end)`,
      recoveredAfterEndMs !== null && recoveredAfterEndMs <= fault.recoveryBoundMs,
      () => (recoveredAfterEndMs === null ? 'not recovered before the load stopped' : `${recoveredAfterEndMs} ms`),
    );
    fault.extra?.(book, requests, faultAt, outcome);
  }

  const invariants = await checkInvariants(client);
  for (const invariant of invariants) {
    book.check(
      `invariant: ${invariant.name}`,
      invariant.violations === 0,
      () => `${invariant.violations} rows, e.g. ${invariant.example}`,
    );
  }

  const count = <T>(items: T[], key: (item: T) => string) => {
    const counts: Record<string, number> = {};
    for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
    return counts;
  };
  return {
    fault: id,
    title: fault?.title ?? 'no fault (control)',
    ...(outcome.note ? { note: outcome.note } : {}),
    sent: count(requests, (r) => r.kind),
    skipped: load.skipped(),
    answers: count(requests, (r) => (r.failure ? 'no answer' : String(r.answer!.status))),
    decisions: count(
      requests.filter((r) => decisionOf(r)),
      (r) => decisionOf(r)!.reason ?? decisionOf(r)!.status,
    ),
    unavailable: count(
      requests.filter((r) => r.answer?.status === 503),
      (r) => classifyUnavailableMessage(errorOf(r)?.message ?? ''),
    ),
    faultMs: outcome.endedAt - faultAt,
    unavailableMs,
    recoveredAfterEndMs,
    retries: { count: retries.length, ok: retriesOk },
    replays: { count: replays.length, ok: replaysOk },
    invariants,
    checks: [...book.results].map(([name, r]) => ({ name, ...r })),
  };
}

function markdown(phases: PhaseSummary[], settings: Settings, seconds: number): string {
  const lines: string[] = [];
  const ms = (v: number | null) => (v === null ? 'not recovered' : `${(v / 1000).toFixed(2)} s`);
  lines.push(
    `Load per phase: ${settings.rate} events/s offered, at most ${settings.inFlight} in flight, ` +
      `${Math.round(settings.duplicates * 100)}% exact duplicates, ${Math.round(settings.conflicts * 100)}% conflicting copies; ` +
      `${settings.beforeMs / 1000} s before the fault, ${settings.afterMs / 1000} s after it ended. Whole run: ${seconds.toFixed(0)} s.`,
    '',
    '| fault | requests (fresh / dup / conflict, skipped) | answers by status | 503 messages (unknown / nothing stored / other) | fault took | failing answers for | recovered after the fault ended | retries ok | replays ok | invariants | failed checks |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const p of phases) {
    const total = Object.values(p.sent).reduce((a, b) => a + b, 0);
    const answers = Object.entries(p.answers)
      .sort()
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    const u = p.unavailable;
    const invariantsOk = p.invariants.filter((i) => i.violations === 0).length;
    const failed = p.checks.filter((c) => c.failed > 0);
    lines.push(
      `| ${p.fault} | ${total} (${p.sent.fresh ?? 0} / ${p.sent.duplicate ?? 0} / ${p.sent.conflict ?? 0}, ${p.skipped}) | ${answers} | ` +
        `${u['outcome-unknown'] ?? 0} / ${u['nothing-stored'] ?? 0} / ${u.unspecified ?? 0} | ${ms(p.faultMs)} | ${ms(p.unavailableMs)} | ` +
        `${ms(p.recoveredAfterEndMs)} | ${p.retries.ok}/${p.retries.count} | ${p.replays.ok}/${p.replays.count} | ` +
        `${invariantsOk}/${p.invariants.length} | ${failed.length === 0 ? 'none' : failed.map((c) => `${c.name} (${c.failed})`).join('; ')} |`,
    );
  }
  lines.push('', 'Failed checks, with up to three examples each:', '');
  let any = false;
  for (const p of phases) {
    for (const c of p.checks.filter((check) => check.failed > 0)) {
      any = true;
      lines.push(`- **${p.fault}**: ${c.name}: ${c.failed} failed, ${c.passed} passed`);
      for (const e of c.examples) lines.push(`  - \`${e.replaceAll('`', "'")}\``);
    }
  }
  if (!any) lines.push('- none');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      faults: { type: 'string' },
      rate: { type: 'string' },
      'in-flight': { type: 'string' },
      duplicates: { type: 'string' },
      conflicts: { type: 'string' },
      'before-ms': { type: 'string' },
      'after-ms': { type: 'string' },
      results: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP.replace('{FAULTS}', FAULTS.map((f) => f.id).join(',')));
    return;
  }
  const number = (v: string | undefined, fallback: number, min: number, max: number, name: string) => {
    const n = v === undefined ? fallback : Number(v);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return n;
  };
  const settings: Settings = {
    rate: number(values.rate, 80, 1, 1000, 'rate'),
    inFlight: number(values['in-flight'], 32, 1, 256, 'in-flight'),
    duplicates: number(values.duplicates, 0.15, 0, 0.5, 'duplicates'),
    conflicts: number(values.conflicts, 0.08, 0, 0.5, 'conflicts'),
    beforeMs: number(values['before-ms'], 3_000, 0, 60_000, 'before-ms'),
    afterMs: number(values['after-ms'], 6_000, 1_000, 60_000, 'after-ms'),
  };
  const selected = values.faults ? values.faults.split(',').map((s) => s.trim()) : FAULTS.map((f) => f.id);
  const unknown = selected.filter((id) => !FAULTS.some((f) => f.id === id));
  if (unknown.length) throw new Error(`unknown faults: ${unknown.join(', ')}`);
  const faults = selected.map((id) => FAULTS.find((f) => f.id === id)!);
  const resultsDir = values.results ? resolve(values.results) : mkdtempSync(join(tmpdir(), 'rewards-faults-'));
  mkdirSync(resultsDir, { recursive: true });

  const started = Date.now();
  const runId = randomBytes(4).toString('hex');
  const identity = await createLoadIdentity(runId, 6);
  const adminToken = randomBytes(24).toString('hex');
  const system = await startFaultSystem({
    env: {
      ...identity.env,
      ADMIN_TOKEN: adminToken,
      NATIVE_ADMISSION_MODE: 'enforce',
      EVENT_RATE_LIMIT_PER_MINUTE: '600',
      NATS_REQUEST_TIMEOUT_MS: String(NATS_REQUEST_TIMEOUT_MS),
    },
    logDir: join(resultsDir, 'logs'),
    log,
  });
  let stopping: Promise<void> | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopping ??= system.stop();
      void stopping.finally(() => process.exit(130));
    });
  }
  const phases: PhaseSummary[] = [];
  let client: pg.Client | undefined;
  try {
    const fixtures = await createFixtures(system.urls, identity, adminToken);
    log(`world ready: ${fixtures.games.length} games; logs in ${join(resultsDir, 'logs')}`);
    const connect = async () => {
      await client?.end().catch(() => {});
      client = new pg.Client({ connectionString: system.databaseUrl });
      client.on('error', () => {}); // reported by the query that meets it
      await client.connect();
      return client;
    };
    for (const fault of [undefined, ...faults]) {
      const phase = await runPhase(system, fixtures, connect, fault, settings);
      const failed = phase.checks.filter((c) => c.failed > 0).length;
      log(
        `${phase.fault}: ${Object.values(phase.sent).reduce((a, b) => a + b, 0)} requests, answers ${JSON.stringify(phase.answers)}, ` +
          `decisions ${JSON.stringify(phase.decisions)}, ` +
          `recovered ${phase.recoveredAfterEndMs ?? 'never'} ms after the fault ended; ${failed === 0 ? 'every check passed' : `${failed} checks failed`}`,
      );
      phases.push(phase);
    }
  } finally {
    await client?.end().catch(() => {});
    stopping ??= system.stop();
    await stopping;
  }
  const seconds = (Date.now() - started) / 1000;
  const table = markdown(phases, settings, seconds);
  writeFileSync(join(resultsDir, 'summary.json'), JSON.stringify({ settings, seconds, phases }, null, 2));
  writeFileSync(join(resultsDir, 'summary.md'), `${table}\n`);
  process.stdout.write(`\n${table}\n\nsummary: ${join(resultsDir, 'summary.md')}\n`);
  const failed = phases.flatMap((p) => p.checks.filter((c) => c.failed > 0).map((c) => `${p.fault}: ${c.name}`));
  process.stdout.write(`faults: ${phases.length - 1} faults, ${failed.length} failed checks\n`);
  process.exitCode = failed.length === 0 ? 0 : 1;
}

await main();
process.exit(process.exitCode ?? 0);
