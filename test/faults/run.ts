// npm run test:faults: the fault suite (docs/reliability.md). The five programs as separate processes on
// a real PostgreSQL (fsync on) and a real nats-server; bounded event load with exact duplicates and conflicting
// copies; one fault at a time in the middle of the load; after each, every answer and the whole database are
// checked. Exits 1 when a check fails. --help for the options.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createLoadIdentity, type LoadIdentity } from '../../load/lib/identity.ts';
import { type Availability, availabilityOf } from './availability.ts';
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
  isFalseNothingStoredClaim,
  rowKey,
  type StoredRow,
  storedRows,
  unknownOutcomeCopies,
} from './checks.ts';
import { createFixtures, type Fixtures, REWARD_CREDITS } from './fixtures.ts';
import { buildHistories, checkerBinary, checkHistories, fundGame, readGames } from './history.ts';
import { pool, type RunningLoad, type SentRequest, send, startLoad } from './load.ts';
import type { Drop } from './netns.ts';
import { RESTORE_TOPOLOGY, runRestoreDrill } from './restore.ts';
import {
  DEFAULT_TOPOLOGY,
  describeTopology,
  EDGE_DRAIN_MS,
  type FaultSystem,
  type FaultTopology,
  POOLER_POOL_SIZE,
  startFaultSystem,
} from './system.ts';
import { UpgradeFault } from './upgrade.ts';
import { WEBHOOK_FAULT_ENV, WebhookReceiverFault } from './webhooks.ts';
import { watchWritable } from './writable.ts';

const HELP = `Usage: npm run test:faults -- [options]      (node test/faults/run.ts)

Starts PostgreSQL (initdb, fsync on), nats-server and the five programs as separate processes on 127.0.0.1, creates
a world through the public API, then runs one phase per fault: event load, the fault in its middle, load until
the service is back; after each phase every answer is checked, the 503'd events are retried with the same eventId,
the answered events are replayed, and the ledger's invariants are checked in SQL over the whole database.
The faults of another topology get a service of their own per topology (PgBouncer, a pg_auto_failover formation, a
NATS cluster, two replicas behind HAProxy, the previous release's programs upgraded to this tree and rolled back,
the ledger in a network namespace, two ledgers in namespaces), started for them and stopped after them. Every phase's requests and answers are checked as histories by Porcupine (a Go
program in test/faults/checker, built with go build). Prints a table of the figures (availability included: printed,
never asserted) and every failed check; exits 1 when a check failed. The partitions need root, ip and iptables.

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

Environment: FAULTS_NATS_SERVER_DEFAULTS=true runs nats-server on its defaults (pings every 2 min) instead of the
settings the deployment guide recommends (1 s x 3).
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

/** The check that a fault could be made at all (a topology's process not found, a command failing, ...). */
const CHECK_INJECTED = 'the fault was made';
/** The check that a fault's checks after the phase could be made (their queries answered). */
const CHECK_SETTLED = "the fault's checks after the phase ran";
/** The check that a fault's own service started (its servers installed and working). */
const CHECK_STARTED = "the fault's service started";
/** Decisions again within this of a new primary accepting writes (the failover fault's target). */
const FAILOVER_RECOVERY_BOUND_MS = 2_000;

interface FaultOutcome {
  /** When the faulted part was back (restarted and ready, or the server accepting again). */
  endedAt: number;
  note?: string;
  /** Named moments of the fault (ms since epoch), for its extra checks. */
  marks?: Record<string, number>;
  /** The event outage the fault caused, when it measures one (the promotion: from the kill to decisions again). */
  outageMs?: number | null;
}

interface Fault {
  id: string;
  title: string;
  /** The service this fault needs, when not the default one (it then gets a service of its own). */
  topology?: FaultTopology;
  inject(system: FaultSystem, load: RunningLoad): Promise<FaultOutcome>;
  /** Decisions again within this of the fault's end (checked); null: the recovery is measured and printed only. */
  recoveryBoundMs: number | null;
  /** Extra checks of this fault on the phase's load requests. */
  extra?(book: CheckBook, requests: SentRequest[], faultAt: number, outcome: FaultOutcome): void;
  /** What the fault needs before the phase's load starts (e.g. webhook endpoints). */
  prepare?(system: FaultSystem, fixtures: Fixtures, developerToken: string, client: pg.Client): Promise<void>;
  /** Checks after the phase's load, retries and replays that need the database; answers a note of figures. */
  settle?(book: CheckBook, client: pg.Client): Promise<string>;
  /** Undoes `prepare` (always, after the phase's checks). */
  cleanUp?(): Promise<void>;
  /**
   * A phase of its own instead of the common one (the restore: the database goes back in time, so the answers of
   * the load are checked against what a restore to T must keep and drop, not against the rows).
   */
  run?: 'restore';
  /** A share of the phase's arrivals sent as batch requests of this many fresh events (load.ts). */
  batches?: { share: number; size: number };
}

const isBad = (r: SentRequest) => r.failure !== undefined || (r.answer!.status !== 200 && r.answer!.status !== 409);

/**
 * Among the requests sent in [from, to): when the first good answer after the last failing one came, or undefined
 * when none failed (null when none answered well after the last failure).
 */
function recoveredAt(requests: SentRequest[], from: number, to: number): number | null | undefined {
  const window = requests.filter((r) => r.sentAt >= from && r.sentAt < to).sort((a, b) => a.sentAt - b.sentAt);
  const lastBad = window.findLastIndex(isBad);
  if (lastBad < 0) return undefined;
  const recovered = window.slice(lastBad + 1).find((r) => !isBad(r));
  return recovered ? recovered.answeredAt! : null;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Every request answered 200 or 409: nothing failed (for the faults a healthy replica or server must absorb). */
function noFailure(book: CheckBook, name: string, requests: SentRequest[]): void {
  for (const r of requests) {
    book.check(
      name,
      !isBad(r),
      () =>
        `${r.copy.eventId} sent ${new Date(r.sentAt).toISOString().slice(11, 23)}, after ${(r.answeredAt ?? Date.now()) - r.sentAt} ms: ${r.failure ?? `${r.answer?.status} ${JSON.stringify(r.answer?.body).slice(0, 160)}`}`,
    );
  }
}

/** The partitions' topologies: the ledger (or two) in network namespaces of their own (test/faults/netns.ts). */
const PARTITIONED: FaultTopology = { ...DEFAULT_TOPOLOGY, ledgerNamespaces: 1 };
const PARTITIONED_DELAY: FaultTopology = { ...PARTITIONED, delayProxy: true };
const TWO_PARTITIONED_LEDGERS: FaultTopology = { ...DEFAULT_TOPOLOGY, ledgerNamespaces: 2 };
const CUT_MS = 10_000;
const LONG_CUT_MS = 45_000;
const LOSS_MS = 15_000;
const LOSS_SHARE = 0.3;
const DELAY_MS = 15_000;

/** A partition of ledger replica `index`: the drops for `ms`, then healed (always, also when something failed). */
function partitionFault(
  id: string,
  title: string,
  topology: FaultTopology,
  index: number,
  ms: number,
  drops: (system: FaultSystem) => Drop[],
): Fault {
  return {
    id,
    title,
    topology,
    recoveryBoundMs: null,
    async inject(system) {
      const ns = system.partitions!.namespaces[index]!;
      try {
        await ns.drop(drops(system));
        await sleep(ms);
      } finally {
        await ns.heal();
      }
      return { endedAt: Date.now() };
    },
  };
}

const webhookFault = new WebhookReceiverFault();
const upgradeFault = new UpgradeFault();

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
      const postgres = system.postgres!; // the default topology: one PostgreSQL cluster
      postgres.stopImmediately();
      await sleep(1_000);
      postgres.start();
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
  {
    id: 'webhook-receiver-down',
    title:
      'an endpoint per game on a local receiver (signatures verified with standardwebhooks): the receivers down 60 s, then back; the ledger SIGKILLed mid-delivery, restarted',
    recoveryBoundMs: RECOVERY_BOUND_MS,
    prepare: (system, fixtures, developerToken, client) =>
      webhookFault.prepare(system, fixtures, developerToken, client),
    inject: (system) => webhookFault.inject(system),
    settle: (book, client) => webhookFault.settle(book, client),
    cleanUp: () => webhookFault.cleanUp(),
  },
  {
    id: 'pooler',
    title: `the state owners through PgBouncer 1.18 (transaction mode, ${POOLER_POOL_SIZE} server connections): PAUSE 1 s, RESUME, then its server connections terminated`,
    topology: { ...DEFAULT_TOPOLOGY, database: 'pgbouncer' },
    recoveryBoundMs: RECOVERY_BOUND_MS,
    async inject(system) {
      // PAUSE (SIGUSR1) waits for the transactions in flight and holds new ones, as before a database restart;
      // RESUME (SIGUSR2). Then the server connections PgBouncer holds are terminated from PostgreSQL (a server
      // restart or server_lifetime behind the pooler): the transactions on them fail while their clients stay
      // connected to PgBouncer.
      const pid = system.bouncerPid();
      if (pid === undefined) throw new Error('the PgBouncer process was not found');
      process.kill(pid, 'SIGUSR1');
      await sleep(1_000);
      process.kill(pid, 'SIGUSR2');
      const admin = new pg.Client({ connectionString: await system.checkDatabaseUrl() });
      admin.on('error', () => {});
      await admin.connect();
      const { rows } = await admin.query<{ n: string }>(
        `select count(pg_terminate_backend(pid))::text as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      await admin.end();
      return { endedAt: Date.now(), note: `paused 1 s; ${rows[0]?.n ?? 0} server connections terminated after RESUME` };
    },
  },
  {
    id: 'failover',
    title:
      "pg_auto_failover (primary + synchronous standby, multi-host DATABASE_URL): `perform switchover`, then SIGKILL of the new primary's postgres",
    topology: { ...DEFAULT_TOPOLOGY, database: 'auto-failover' },
    // From the moment a primary accepts writes again after the kill.
    recoveryBoundMs: FAILOVER_RECOVERY_BOUND_MS,
    async inject(system, load) {
      const formation = system.formation!;
      const watch = await watchWritable(formation.ports);
      const portOf = async () => (await formation.waitForPrimary()).port;
      try {
        const before = await portOf();
        const switchoverAt = Date.now();
        const promoted = await formation.switchover();
        const switchoverDoneAt = Date.now();
        const switchoverWritable = watch.firstWriteAfter(switchoverAt, promoted.port);
        // Both nodes in their roles again (the old primary a secondary), and decisions answered again after the
        // switchover (however long a loaded machine takes: the time is printed, not asserted), before the second fault.
        await waitFormed(system);
        const writableAt = switchoverWritable?.endedAt ?? switchoverDoneAt;
        await until(
          () => load.sent.find((r) => r.sentAt >= writableAt && r.answeredAt !== undefined && !isBad(r)),
          60_000,
        );
        await sleep(2_000);
        const killAt = Date.now();
        const killed = await formation.killPrimary();
        // Writable again: the first write after the killed server was seen failing (its keeper restarts it, or the
        // monitor promotes the standby).
        const down = await until(() => watch.firstFailureAfter(killAt, killed.port), 30_000);
        const back = await until(() => watch.firstWriteAfter(down?.startedAt ?? killAt), 120_000);
        const endedAt = back?.endedAt ?? Date.now();
        const backNode = back
          ? back.port === killed.port
            ? 'the same node (postgres restarted by its keeper)'
            : 'the standby, promoted'
          : 'nothing';
        return {
          endedAt,
          marks: {
            switchoverAt,
            switchoverWritableAt: switchoverWritable?.endedAt ?? switchoverDoneAt,
            killAt,
            killWritableAt: endedAt,
          },
          note:
            `switchover ${before} -> ${promoted.port} took ${seconds(switchoverDoneAt - switchoverAt)}, ` +
            `the new primary took writes ${switchoverWritable ? seconds(switchoverWritable.endedAt - switchoverAt) : '(not seen)'} after it began; ` +
            `SIGKILL of ${killed.port}'s postgres: writes again ${seconds(endedAt - killAt)} later on ${backNode}`,
        };
      } finally {
        await watch.stop();
      }
    },
    extra(book, requests, _faultAt, outcome) {
      const m = outcome.marks!;
      // Decisions again after the switchover, before the kill (the suite waits up to a minute for them): asserted; how
      // long after the new primary took writes is printed (on a quiet machine under a second or two, on a loaded one
      // more: a time, not a check).
      const name = 'failover: decisions again after the switchover, before the kill';
      const at = recoveredAt(requests, m.switchoverAt!, m.killAt!);
      const after = at === undefined ? 0 : at === null ? null : Math.max(0, at - m.switchoverWritableAt!);
      book.check(name, after !== null, () => 'not recovered before the kill');
      outcome.note += `; answers 200 again ${after === null ? 'never' : seconds(after)} after the switchover's new primary took writes`;
      const atKill = recoveredAt(requests, m.killAt!, Number.POSITIVE_INFINITY);
      const afterKill = atKill === undefined ? 0 : atKill === null ? null : Math.max(0, atKill - m.killWritableAt!);
      outcome.note += `, ${afterKill === null ? 'never' : seconds(afterKill)} after the kill's`;
    },
  },
  {
    id: 'nats-cluster',
    title: '3-node NATS cluster: SIGKILL of the server the ledger is connected to (restarted 1 s later)',
    topology: { ...DEFAULT_TOPOLOGY, nats: 'cluster' },
    // The clients move to a surviving server at once; then decisions within the nats-kill bound.
    recoveryBoundMs: NATS_RECOVERY_BOUND_MS,
    async inject(system) {
      const cluster = system.natsCluster!;
      const [node] = await cluster.nodesOf('ledger');
      if (!node) throw new Error('the ledger is connected to no node of the cluster (/connz)');
      const clients = (await node.connections()).filter(Boolean).sort();
      await node.kill('SIGKILL');
      const endedAt = Date.now();
      await sleep(1_000);
      await node.start();
      return { endedAt, note: `killed ${node.name} (its clients: ${clients.join(', ')}); restarted 1 s later` };
    },
  },
  {
    id: 'rolling',
    title: `rolling restart of 2 replicas of every program (edges behind HAProxy, SHUTDOWN_DRAIN_MS ${EDGE_DRAIN_MS})`,
    topology: { database: 'direct', nats: 'single', replicas: 2, balancer: true },
    recoveryBoundMs: RECOVERY_BOUND_MS,
    async inject(system) {
      const note = await system.rollingRestart((line) => log(`rolling: ${line}`));
      return { endedAt: Date.now(), note };
    },
    extra(book, requests) {
      noFailure(book, 'rolling: no request failed (no 503, no error from the balancer, no connection error)', requests);
    },
  },
  {
    id: 'upgrade',
    title:
      "rolling upgrade from the previous release (2 replicas each, edges behind HAProxy) to this tree under mixed load (events, batches, console actions, webhooks): this tree's migrations on the live database, each replica replaced (new ready before old leaves), then the code rolled back the same way on the new schema",
    topology: { database: 'direct', nats: 'single', replicas: 2, balancer: true, release: 'previous' },
    recoveryBoundMs: RECOVERY_BOUND_MS,
    batches: { share: 0.1, size: 4 },
    prepare: (system, fixtures, developerToken, client) =>
      upgradeFault.prepare(system, fixtures, developerToken, client),
    inject: (system) => upgradeFault.inject(system, log),
    extra(book, requests, _faultAt, outcome) {
      noFailure(
        book,
        'upgrade: no request failed (no 5xx, no 503, no 4xx but 409 event_conflict, no connection error)',
        requests,
      );
      const batched = requests.filter((r) => r.batch !== undefined);
      outcome.note += `; ${upgradeFault.latencyNote(requests)}; ${batched.length} events in ${new Set(batched.map((r) => r.batch!.id)).size} batch requests`;
    },
    settle: (book, client) => upgradeFault.settle(book, client),
    cleanUp: () => upgradeFault.cleanUp(),
  },
  {
    id: 'pgbouncer-restart',
    title: 'PgBouncer process SIGKILLed, then started again on its port',
    topology: { ...DEFAULT_TOPOLOGY, database: 'pgbouncer' },
    recoveryBoundMs: null,
    async inject(system) {
      const bouncer = system.bouncer!;
      await bouncer.kill();
      await bouncer.start();
      return { endedAt: Date.now() };
    },
  },
  {
    id: 'promotion',
    title:
      "pg_auto_failover: the primary's keeper and postgres SIGKILLed (the node gone), the standby promoted (AUTO_FAILOVER_SETTINGS)",
    topology: { ...DEFAULT_TOPOLOGY, database: 'auto-failover' },
    recoveryBoundMs: null,
    async inject(system) {
      const formation = system.formation!;
      // After the failover fault (the same formation), both nodes in their roles again first.
      await waitFormed(system);
      const watch = await watchWritable(formation.ports);
      try {
        const killAt = Date.now();
        const killed = await formation.killPrimaryNode();
        const back = await until(
          () => watch.attempts.find((a) => a.ok && a.startedAt >= killAt && a.port !== killed.port),
          120_000,
        );
        const endedAt = back?.endedAt ?? Date.now();
        return {
          endedAt,
          marks: { killAt, writableAt: endedAt },
          note: `node ${killed.port} killed (keeper and postgres); the standby took writes ${back ? seconds(endedAt - killAt) : 'never (120 s)'} after the kill`,
        };
      } finally {
        await watch.stop();
      }
    },
    extra(_book, requests, _faultAt, outcome) {
      const m = outcome.marks!;
      const at = recoveredAt(requests, m.killAt!, Number.POSITIVE_INFINITY);
      outcome.note +=
        at === undefined
          ? '; no request failed'
          : at === null
            ? '; events never answered again'
            : `; event outage ${seconds(at - m.killAt!)} from the kill, decisions again ${seconds(Math.max(0, at - m.writableAt!))} after the standby took writes`;
      outcome.outageMs = at === undefined ? 0 : at === null ? null : at - m.killAt!;
    },
  },
  partitionFault('pg-cut', 'the ledger cut from PostgreSQL (both directions) for 10 s', PARTITIONED, 0, CUT_MS, (s) => [
    { port: s.postgres!.port, direction: 'both' },
  ]),
  partitionFault('nats-cut', 'the ledger cut from NATS (both directions) for 10 s', PARTITIONED, 0, CUT_MS, (s) => [
    { port: s.natsPort, direction: 'both' },
  ]),
  partitionFault(
    'pg-one-way',
    "one-way cut for 10 s: PostgreSQL's packets to the ledger dropped (the ledger's still arrive)",
    PARTITIONED,
    0,
    CUT_MS,
    (s) => [{ port: s.postgres!.port, direction: 'from-server' }],
  ),
  partitionFault(
    'loss',
    `${LOSS_SHARE * 100}% of the ledger's packets to and from PostgreSQL and NATS dropped for ${LOSS_MS / 1000} s`,
    PARTITIONED,
    0,
    LOSS_MS,
    (s) =>
      [s.postgres!.port, s.natsPort].map((port) => ({ port, direction: 'both' as const, probability: LOSS_SHARE })),
  ),
  {
    id: 'delay',
    title: `200 +/- 50 ms on every chunk between the ledger and PostgreSQL and NATS (a proxy in its namespace) for ${DELAY_MS / 1000} s`,
    topology: PARTITIONED_DELAY,
    recoveryBoundMs: null,
    async inject(system) {
      for (const proxy of system.delayProxies) proxy.delay();
      try {
        await sleep(DELAY_MS);
      } finally {
        for (const proxy of system.delayProxies) proxy.undelay();
      }
      return { endedAt: Date.now() };
    },
  },
  partitionFault(
    'replica-pg-cut',
    'two ledgers, the second cut from PostgreSQL for 45 s',
    TWO_PARTITIONED_LEDGERS,
    1,
    LONG_CUT_MS,
    (s) => [{ port: s.postgres!.port, direction: 'both' }],
  ),
  partitionFault(
    'replica-nats-cut',
    'two ledgers, the second cut from NATS for 45 s',
    TWO_PARTITIONED_LEDGERS,
    1,
    LONG_CUT_MS,
    (s) => [{ port: s.natsPort, direction: 'both' }],
  ),
  {
    id: 'restore',
    title:
      'the primary and its standby lost: PostgreSQL restored by pgBackRest to a time T (full + incremental backup, archived WAL) into a new data directory, the programs started on it',
    topology: RESTORE_TOPOLOGY,
    run: 'restore',
    async inject() {
      throw new Error('the restore runs as a phase of its own');
    },
    recoveryBoundMs: null,
  },
];

/**
 * The story of each event a 503 said was not stored although it is (the check `noFalseClaim` in checks.ts): every
 * copy of it sent in the phase (kind, when sent and answered, status, message) and when the stored row was made
 * (`created_at`, the deciding transaction's start), to tell a false claim from a copy's doing the check cannot see.
 */
function explainFalseClaims(
  requests: SentRequest[],
  before: Map<string, StoredRow>,
  freshIds: Set<string>,
  unknownCopies: Map<string, SentRequest[]>,
): string[] {
  const time = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString().slice(11, 23));
  const lines: string[] = [];
  for (const r of requests) {
    if (!isFalseNothingStoredClaim(r, before, freshIds, unknownCopies)) continue;
    const stored = before.get(rowKey(r.copy.gameId, r.copy.eventId)) as StoredRow;
    const copies = requests
      .filter((c) => c.copy.eventId === r.copy.eventId)
      .map(
        (c) =>
          `${c === r ? '*' : ''}${c.kind} sent ${time(c.sentAt)} answered ${time(c.answeredAt)} ` +
          `${c.failure ?? `${c.answer?.status} ${classifyUnavailableMessage(errorOf(c)?.message ?? '')}`}`,
      );
    lines.push(
      `${r.copy.eventId}: row ${stored.id} created ${time(stored.createdAtMs)}; copies: ${copies.join(' | ')}`,
    );
  }
  return lines;
}

/** Polls `get` every 50 ms until it returns something; undefined after timeoutMs. */
async function until<T>(get: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value !== undefined || Date.now() > deadline) return value;
    await sleep(50);
  }
}

/** Waits until the formation has a primary and a secondary again (each as assigned). */
async function waitFormed(system: FaultSystem, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const nodes = await system.formation!.state().catch(() => []);
    const settled = (state: string) => nodes.some((n) => n.reportedState === state && n.assignedState === state);
    if (settled('primary') && settled('secondary')) return;
    await sleep(250);
  }
  throw new Error(`the formation did not settle (a primary and a secondary) within ${timeoutMs} ms`);
}

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
  /** For each 503 "nothing stored" of a stored event: every copy of that event sent, and the stored row. */
  falseClaims?: string[];
  availability: Availability;
  /** The promotion's event outage (from the kill to decisions again), when the fault measures one. */
  outageMs?: number | null;
  /** The independent checker's verdict on the phase's histories. */
  checker: { registers: number; banks: number; failed: number };
  /** Requests whose outcome is still unknown after the retries: part of the next phase's histories. */
  unresolved?: SentRequest[];
}

/** What a phase needs besides the service: the developer's token (funding changes) and the earlier unknowns. */
interface PhaseContext {
  developerToken: string;
  /** Requests of earlier phases still without a known outcome (they may take effect in this one). */
  unresolved: SentRequest[];
}

/** Credits moved to the small-budget game during each phase's fault (a funding change in the histories). */
const FUNDING_CREDITS = 100;

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
  context: PhaseContext,
): Promise<PhaseSummary> {
  const id = fault?.id ?? 'baseline';
  const book = new CheckBook();
  const gameIds = fixtures.games.map((g) => g.id);
  const startClient = await connect();
  const initialReads = await readGames(startClient, gameIds);
  // A fault that could not be prepared is reported as not made; the phase's load and checks still run.
  let prepareFailure: string | undefined;
  try {
    await fault?.prepare?.(system, fixtures, context.developerToken, startClient);
  } catch (error) {
    prepareFailure = (error as Error).message.split('\n')[0]!;
  }
  const load = startLoad(
    {
      ingestUrl: system.urls.ingest,
      fixtures,
      ratePerSecond: settings.rate,
      maxInFlight: settings.inFlight,
      duplicateShare: settings.duplicates,
      conflictShare: settings.conflicts,
      timeoutMs: CLIENT_TIMEOUT_MS,
      ...(fault?.batches ? { batchShare: fault.batches.share, batchSize: fault.batches.size } : {}),
    },
    id,
  );
  await sleep(settings.beforeMs);
  const faultAt = Date.now();
  let outcome: FaultOutcome = { endedAt: faultAt };
  // A funding change of the small-budget game while the fault is made (it goes through the ledger too).
  const funding = fundGame(
    system.urls.gateway,
    context.developerToken,
    fixtures.projectId,
    fixtures.games[1]!.id,
    FUNDING_CREDITS,
    CLIENT_TIMEOUT_MS,
  );
  if (fault) {
    log(`${id}: ${fault.title}`);
    try {
      if (prepareFailure !== undefined) throw new Error(`not prepared: ${prepareFailure}`);
      outcome = await fault.inject(system, load);
      book.pass(CHECK_INJECTED);
      log(`${id}: fault over after ${outcome.endedAt - faultAt} ms${outcome.note ? ` (${outcome.note})` : ''}`);
    } catch (error) {
      // Reported, and the phase goes on: the answers and the database are still checked.
      const message = (error as Error).message.split('\n')[0]!;
      book.fail(CHECK_INJECTED, message);
      outcome = { endedAt: Date.now(), note: `the fault could not be made: ${message}` };
      log(`${id}: ${outcome.note}`);
    }
  }
  const injected = book.results.get(CHECK_INJECTED)?.failed === 0;
  await sleep(settings.afterMs);
  await load.stop();
  const fundingChange = await funding;
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
  // The games first, then the decisions: a decision stored in between is in the rows but not in the read (the
  // checker may place it after the read), never the other way round.
  const finalReads = await readGames(client, gameIds);
  const after = await storedRows(
    client,
    [...context.unresolved, ...requests].map((r) => r.copy.eventId),
  );

  // The independent checker: every request, retry and replay (and the earlier unknowns) as histories.
  const histories = buildHistories(
    [...context.unresolved, ...requests, ...retries, ...replays],
    REWARD_CREDITS,
    initialReads,
    fundingChange ? [fundingChange] : [],
    finalReads,
    after,
  );
  const verdict = await checkHistories(histories);
  book.pass(CHECK.linearizable, verdict.registers + verdict.banks - verdict.failures.length);
  for (const failure of verdict.failures) {
    book.fail(
      CHECK.linearizable,
      `${failure.model} ${failure.key}: ${failure.result}: ${failure.ops.slice(0, 12).join(' | ')}`,
    );
  }
  const unresolved = retries.filter((r) => r.failure !== undefined || r.answer?.status === 503);

  const freshIds = new Set<string>();
  for (const r of [...requests, ...retries]) {
    const d = decisionOf(r);
    if (!d || d.replayed) continue;
    book.check(CHECK.oneFresh, !freshIds.has(d.id), () => `${r.copy.eventId}: decision ${d.id} answered fresh twice`);
    freshIds.add(d.id);
  }
  const unknownCopies = unknownOutcomeCopies([...requests, ...retries]);
  for (const r of requests) checkAgainstRows(book, r, after, before, freshIds, unknownCopies);
  const falseClaims = explainFalseClaims(requests, before, freshIds, unknownCopies);
  for (const line of falseClaims) log(`${id}: 503 "nothing stored" for a stored event: ${line}`);
  let retriesOk = 0;
  for (const r of retries) {
    checkAnswer(book, r);
    checkAgainstRows(book, r, after, after, freshIds, unknownCopies);
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
    checkAgainstRows(book, r, after, after, freshIds, unknownCopies);
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
    const bound = fault.recoveryBoundMs;
    if (bound !== null) {
      book.check(
        `${CHECK.recovered} (decisions again within ${bound / 1000} s of its end)`,
        recoveredAfterEndMs !== null && recoveredAfterEndMs <= bound,
        () => (recoveredAfterEndMs === null ? 'not recovered before the load stopped' : `${recoveredAfterEndMs} ms`),
      );
    }
    if (injected) fault.extra?.(book, requests, faultAt, outcome);
  }

  if (fault?.settle) {
    try {
      if (injected) {
        const figures = await fault.settle(book, client);
        outcome.note = outcome.note ? `${outcome.note}; ${figures}` : figures;
      }
    } catch (error) {
      book.fail(CHECK_SETTLED, (error as Error).message.split('\n')[0]!);
    } finally {
      await fault.cleanUp?.();
    }
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
    ...(falseClaims.length > 0 ? { falseClaims } : {}),
    availability: availabilityOf(requests, before, faultAt, outcome.endedAt, NATS_REQUEST_TIMEOUT_MS),
    ...(outcome.outageMs === undefined ? {} : { outageMs: outcome.outageMs }),
    checker: { registers: verdict.registers, banks: verdict.banks, failed: verdict.failures.length },
    unresolved,
  };
}

/** The restore drill (test/faults/restore.ts) as a phase of the table. */
async function runRestorePhase(
  system: FaultSystem,
  fixtures: Fixtures,
  fault: Fault,
  settings: Settings,
  identity: LoadIdentity,
  adminToken: string,
): Promise<PhaseSummary> {
  const book = new CheckBook();
  log(`${fault.id}: ${fault.title}`);
  const startedAt = Date.now();
  try {
    const result = await runRestoreDrill(system, fixtures, book, {
      rate: settings.rate,
      inFlight: settings.inFlight,
      duplicates: settings.duplicates,
      conflicts: settings.conflicts,
      timeoutMs: CLIENT_TIMEOUT_MS,
      identity,
      adminToken,
      log,
    });
    book.pass(CHECK_INJECTED);
    const count = <T>(items: T[], key: (item: T) => string) => {
      const counts: Record<string, number> = {};
      for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
      return counts;
    };
    const requests = result.requests;
    return {
      fault: fault.id,
      title: fault.title,
      note: `${result.note}; the phase took ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
      sent: count(requests, (r) => r.kind),
      skipped: 0,
      answers: count(requests, (r) => (r.failure ? 'no answer' : String(r.answer!.status))),
      decisions: count(
        requests.filter((r) => decisionOf(r)),
        (r) => decisionOf(r)!.reason ?? decisionOf(r)!.status,
      ),
      unavailable: count(
        requests.filter((r) => r.answer?.status === 503),
        (r) => classifyUnavailableMessage(errorOf(r)?.message ?? ''),
      ),
      faultMs: result.endedAt - result.faultAt,
      unavailableMs: result.outageMs,
      recoveredAfterEndMs: 0,
      retries: {
        count: result.retries.length,
        ok: result.retries.filter((r) => decisionOf(r)?.replayed === false).length,
      },
      replays: {
        count: result.replays.length,
        ok: result.replays.filter((r) => decisionOf(r)?.replayed === true).length,
      },
      invariants: result.invariants,
      checks: [...book.results].map(([name, r]) => ({ name, ...r })),
      availability: {
        phaseShare: null,
        faultShare: null,
        firstOkAfterEndMs: null,
        staleTransactions: 0,
        staleLatestMs: null,
      },
      outageMs: result.outageMs,
      checker: { registers: 0, banks: 0, failed: 0 },
    };
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]!;
    log(`${fault.id}: the drill failed: ${message}`);
    const summary = notRun(fault, message);
    summary.note = `the drill failed: ${message}`;
    summary.checks = [
      ...[...book.results].map(([name, r]) => ({ name, ...r })),
      { name: CHECK_INJECTED, passed: 0, failed: 1, examples: [message] },
    ];
    return summary;
  }
}

/** The row of a fault whose service did not start. */
function notRun(fault: Fault | undefined, message: string): PhaseSummary {
  return {
    fault: fault?.id ?? 'baseline',
    title: fault?.title ?? 'no fault (control)',
    note: `not run: ${message}`,
    sent: {},
    skipped: 0,
    answers: {},
    decisions: {},
    unavailable: {},
    faultMs: 0,
    unavailableMs: 0,
    recoveredAfterEndMs: 0,
    retries: { count: 0, ok: 0 },
    replays: { count: 0, ok: 0 },
    invariants: [],
    checks: [{ name: CHECK_STARTED, passed: 0, failed: 1, examples: [message] }],
    availability: {
      phaseShare: null,
      faultShare: null,
      firstOkAfterEndMs: null,
      staleTransactions: 0,
      staleLatestMs: null,
    },
    checker: { registers: 0, banks: 0, failed: 0 },
  };
}

function markdown(phases: PhaseSummary[], settings: Settings, seconds: number): string {
  const lines: string[] = [];
  const ms = (v: number | null) => (v === null ? 'not recovered' : `${(v / 1000).toFixed(2)} s`);
  const percent = (v: number | null) => (v === null ? '-' : `${(v * 100).toFixed(1)}%`);
  lines.push(
    `Load per phase: ${settings.rate} events/s offered, at most ${settings.inFlight} in flight, ` +
      `${Math.round(settings.duplicates * 100)}% exact duplicates, ${Math.round(settings.conflicts * 100)}% conflicting copies; ` +
      `${settings.beforeMs / 1000} s before the fault, ${settings.afterMs / 1000} s after it ended. Whole run: ${seconds.toFixed(0)} s.`,
    '',
    '| fault | requests (fresh / dup / conflict, skipped) | answers by status | 503 messages (unknown / nothing stored / other) | fault took | failing answers for | recovered after the fault ended | 200/409 share: phase / during the fault | first 200 after the end | transactions started after their deadline (latest) | retries ok | replays ok | invariants | checker (registers / banks) | failed checks |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
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
    const a = p.availability;
    lines.push(
      `| ${p.fault} | ${total} (${p.sent.fresh ?? 0} / ${p.sent.duplicate ?? 0} / ${p.sent.conflict ?? 0}, ${p.skipped}) | ${answers} | ` +
        `${u['outcome-unknown'] ?? 0} / ${u['nothing-stored'] ?? 0} / ${u.unspecified ?? 0} | ${ms(p.faultMs)} | ${ms(p.unavailableMs)} | ` +
        `${ms(p.recoveredAfterEndMs)} | ${percent(a.phaseShare)} / ${percent(a.faultShare)} | ${ms(a.firstOkAfterEndMs)} | ` +
        `${a.staleTransactions}${a.staleLatestMs === null ? '' : ` (+${ms(a.staleLatestMs)})`} | ` +
        `${p.retries.ok}/${p.retries.count} | ${p.replays.ok}/${p.replays.count} | ` +
        `${invariantsOk}/${p.invariants.length} | ${p.checker.failed === 0 ? 'Ok' : `${p.checker.failed} failed`} (${p.checker.registers} / ${p.checker.banks}) | ` +
        `${failed.length === 0 ? 'none' : failed.map((c) => `${c.name} (${c.failed})`).join('; ')} |`,
    );
  }
  const noted = phases.filter((p) => p.note);
  if (noted.length > 0) {
    lines.push('', 'Notes:', '');
    for (const p of noted) lines.push(`- **${p.fault}**: ${p.note}`);
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
  const env = {
    ...identity.env,
    ADMIN_TOKEN: adminToken,
    NATIVE_ADMISSION_MODE: 'enforce',
    EVENT_RATE_LIMIT_PER_MINUTE: '600',
    NATS_REQUEST_TIMEOUT_MS: String(NATS_REQUEST_TIMEOUT_MS),
    ...WEBHOOK_FAULT_ENV,
  };
  // The faults on the default service share one (after a control phase); each fault that needs another topology
  // gets a service of its own, started for it and stopped after it (one service at a time: a 2-core machine).
  // Faults of one topology share its service, in the order selected (the partitions' in one namespace set).
  const groups: Array<{ label: string; topology: FaultTopology; faults: Array<Fault | undefined> }> = [];
  const shared = faults.filter((f) => f.topology === undefined);
  if (shared.length > 0) groups.push({ label: '', topology: DEFAULT_TOPOLOGY, faults: [undefined, ...shared] });
  for (const fault of faults.filter((f) => f.topology !== undefined)) {
    const group = groups.find((g) => g.label !== '' && JSON.stringify(g.topology) === JSON.stringify(fault.topology));
    if (group) {
      group.faults.push(fault);
      group.label += `+${fault.id}`;
    } else groups.push({ label: fault.id, topology: fault.topology!, faults: [fault] });
  }
  // Built before any service starts (go build; cached): a checker that cannot be built fails the run at once.
  await checkerBinary();

  let current: FaultSystem | undefined;
  /** The service being started, if any: a signal meanwhile stops it once it is up (else its servers would stay). */
  let starting: Promise<FaultSystem> | undefined;
  let stopping: Promise<void> | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopping ??=
        current?.stop() ??
        starting?.then(
          (system) => system.stop(),
          () => undefined,
        ) ??
        Promise.resolve();
      void stopping.finally(() => process.exit(130));
    });
  }
  const phases: PhaseSummary[] = [];
  for (const group of groups) {
    const logDir = join(resultsDir, 'logs', group.label);
    if (group.label) log(`${group.label}: starting its own service: ${describeTopology(group.topology)}`);
    let system: FaultSystem;
    try {
      starting = startFaultSystem({ env, logDir, log, topology: group.topology });
      system = await starting;
    } catch (error) {
      // Its servers missing or failing: every fault of the group is reported as not run, and the suite goes on.
      const message = (error as Error).message.split('\n')[0]!;
      log(`${group.label || 'the default service'} did not start: ${message}`);
      for (const fault of group.faults) phases.push(notRun(fault, message));
      continue;
    }
    starting = undefined;
    current = system;
    let client: pg.Client | undefined;
    try {
      const fixtures = await createFixtures(system.urls, identity, adminToken);
      log(`world ready: ${fixtures.games.length} games; logs in ${logDir}`);
      const connect = async () => {
        await client?.end().catch(() => {});
        client = new pg.Client({ connectionString: await system.checkDatabaseUrl() });
        client.on('error', () => {}); // reported by the query that meets it
        await client.connect();
        return client;
      };
      let unresolved: SentRequest[] = [];
      for (const fault of group.faults) {
        const phase =
          fault?.run === 'restore'
            ? await runRestorePhase(system, fixtures, fault, settings, identity, adminToken)
            : await runPhase(system, fixtures, connect, fault, settings, {
                developerToken: identity.developerToken,
                unresolved,
              });
        unresolved = phase.unresolved ?? [];
        delete phase.unresolved;
        const failed = phase.checks.filter((c) => c.failed > 0).length;
        log(
          `${phase.fault}: ${Object.values(phase.sent).reduce((a, b) => a + b, 0)} requests, answers ${JSON.stringify(phase.answers)}, ` +
            `decisions ${JSON.stringify(phase.decisions)}, ` +
            `recovered ${phase.recoveredAfterEndMs ?? 'never'} ms after the fault ended; ${failed === 0 ? 'every check passed' : `${failed} checks failed`}` +
            (phase.note ? ` (${phase.note})` : ''),
        );
        phases.push(phase);
      }
    } finally {
      await client?.end().catch(() => {});
      stopping ??= system.stop();
      await stopping;
      stopping = undefined;
      current = undefined;
    }
  }
  const runSeconds = (Date.now() - started) / 1000;
  const table = markdown(phases, settings, runSeconds);
  writeFileSync(join(resultsDir, 'summary.json'), JSON.stringify({ settings, seconds: runSeconds, phases }, null, 2));
  writeFileSync(join(resultsDir, 'summary.md'), `${table}\n`);
  process.stdout.write(`\n${table}\n\nsummary: ${join(resultsDir, 'summary.md')}\n`);
  const failed = phases.flatMap((p) => p.checks.filter((c) => c.failed > 0).map((c) => `${p.fault}: ${c.name}`));
  process.stdout.write(
    `faults: ${phases.filter((p) => p.fault !== 'baseline').length} faults, ${failed.length} failed checks\n`,
  );
  process.exitCode = failed.length === 0 ? 0 : 1;
}

await main();
process.exit(process.exitCode ?? 0);
