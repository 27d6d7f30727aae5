// The fault `restore` (docs/operations.md, "Restoring"): the primary and its standby lost, the database brought
// back from pgBackRest to a point in time. Under the suite's mixed event load (fresh events, exact duplicates,
// conflicting copies), with a webhook endpoint per game: a full backup, load, an incremental backup, load, a target
// time T read from the database's clock, load (with a game key, a device permit and a developer invitation made after
// T), until T's WAL segment is archived; then PostgreSQL is stopped at once (lost), the five programs stopped, the
// repository restored to T into a new data directory, started on the old port, and the current programs started on
// it. Checked afterwards: every decision committed at or before T is there and none after (commit timestamps of the
// lost server against the restored rows, and the answers the clients had); the ledger's invariants; a replay of an
// event decided before T answers its stored decision; an event whose decision was lost, sent again, is decided afresh;
// keys, permits and invitations made after T are gone, those before T work; the webhooks agree with the restored
// decisions (what the restored outbox holds is delivered with its ids, nothing of a lost decision is sent again);
// the service takes events. The figures: the archive lag of T (the RPO it shows), restore and recovery times and
// the time from the loss to the service ready (with the restore's share).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { LoadIdentity } from '../../load/lib/identity.ts';
import { type ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver.ts';
import {
  type CheckBook,
  checkAnswer,
  checkInvariants,
  decisionOf,
  type InvariantResult,
  rowKey,
  storedRows,
} from './checks.ts';
import { consoleCall, type Fixtures } from './fixtures.ts';
import { freshCopy, pool, type SentRequest, send, startLoad } from './load.ts';
import { ARCHIVE_TIMEOUT_SECONDS, DEFAULT_TOPOLOGY, type FaultSystem, type FaultTopology, PROGRAMS } from './system.ts';

export const RESTORE_TOPOLOGY: FaultTopology = { ...DEFAULT_TOPOLOGY, backups: true };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The load's stretches: before the full backup, between the backups, after the incremental one, after T. */
const BEFORE_FULL_MS = 3_000;
const BETWEEN_BACKUPS_MS = 2_000;
/** pgBackRest records a backup's stop time in whole seconds: T is taken more than a second after it. */
const BEFORE_TARGET_MS = 1_500;
const AFTER_TARGET_MS = 4_000;
/** Load on the restored service (it takes events). */
const AFTER_RESTORE_MS = 3_000;
/** Starts of a program on the restored database before the drill gives up (a Deployment would keep restarting it). */
const START_ATTEMPTS = 3;
/** How long the webhooks may take to drain the restored outbox. */
const WEBHOOK_DRAIN_MS = 60_000;

export const CHECK_RESTORE = {
  presentBeforeT: 'restore: every decision committed at or before T is in the restored database',
  absentAfterT: 'restore: no decision committed after T is in the restored database',
  answeredBeforeT: 'restore: every decision answered before T is in the restored database',
  sentAfterT: 'restore: no event first sent after T is in the restored database',
  replayBeforeT: 'restore: a replay of an event decided before T answers its stored decision',
  decidedAfresh: 'restore: an event whose decision was lost, sent again, is decided afresh (a new decision)',
  credentials: 'restore: keys, permits and invitations before T work, those after T are gone',
  webhooksRestored: 'restore: every message sent after the restore reports a restored decision',
  webhooksSameBytes: 'restore: a webhook-id sent again carries the same message',
  webhooksSameId: 'restore: a decision delivered before the loss and after the restore has one webhook-id',
  webhooksDelivered: 'restore: every restored decision delivered at least once, its outbox drained',
  ready: 'restore: every program ready on the restored database and taking events',
  drill: 'restore: the drill ran (backups, target archived, restore, start)',
} as const;

export interface RestoreDrillOptions {
  rate: number;
  inFlight: number;
  duplicates: number;
  conflicts: number;
  timeoutMs: number;
  identity: LoadIdentity;
  adminToken: string;
  log: (line: string) => void;
}

export interface RestoreDrillResult {
  requests: SentRequest[];
  retries: SentRequest[];
  replays: SentRequest[];
  invariants: InvariantResult[];
  note: string;
  /** From the loss of the database to every program ready on the restored one. */
  outageMs: number;
  faultAt: number;
  endedAt: number;
}

interface Endpoint {
  id: string;
  gameId: string;
  receiver: WebhookReceiver;
}

interface DecisionData {
  id: string;
  eventId: string;
  gameId: string;
  status: string;
}

const dataOf = (r: ReceivedWebhook): DecisionData | undefined => {
  const data = (r.verified as { data?: DecisionData }).data;
  return data && typeof data.id === 'string' ? data : undefined;
};

async function http(url: string, init: RequestInit & { token: string; json?: unknown }): Promise<number> {
  const response = await fetch(url, {
    ...init,
    headers: {
      Authorization: `Bearer ${init.token}`,
      ...(init.json === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    signal: AbortSignal.timeout(15_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Keys, a device permit and a developer invitation, made through the public API (before or after T). */
async function makeCredentials(system: FaultSystem, fixtures: Fixtures, options: RestoreDrillOptions, label: string) {
  const game = fixtures.games[0]!;
  const key = await consoleCall(system.urls.gateway, options.identity.developerToken, {
    type: 'issueKey',
    gameId: game.id,
    kind: 'secret',
    name: `restore drill ${label}`,
  });
  const permit = {
    sessionId: `restore-${label}-${randomUUID()}`,
    creditsUserId: options.identity.nativeSessions[0]!.creditsUserId,
    expiresInSeconds: 86_400,
  };
  const permitStatus = await http(`${system.urls.gateway}/api/admin/v1/device-permits`, {
    method: 'POST',
    token: options.adminToken,
    json: permit,
  });
  const email = `restore-${label}-${randomUUID().slice(0, 8)}@example.com`;
  const invited = await http(`${system.urls.gateway}/api/admin/v1/invitations`, {
    method: 'POST',
    token: options.adminToken,
    json: { email },
  });
  const developerToken = await options.identity.signDeveloper(email);
  const access = await http(`${system.urls.gateway}/api/developer/v1/access`, { method: 'GET', token: developerToken });
  if (permitStatus !== 200 || invited !== 200 || access !== 200)
    throw new Error(`${label}: permit ${permitStatus}, invitation ${invited}, access ${access}`);
  return { game, secret: key.issuedKey as string, sessionId: permit.sessionId, developerToken };
}

type Credentials = Awaited<ReturnType<typeof makeCredentials>>;

export async function runRestoreDrill(
  system: FaultSystem,
  fixtures: Fixtures,
  book: CheckBook,
  options: RestoreDrillOptions,
): Promise<RestoreDrillResult> {
  const { log } = options;
  const backups = system.backups;
  const postgres = system.postgres;
  if (!backups || !postgres) throw new Error('the restore drill needs the backups topology');
  const figures: string[] = [];
  const gameIds = fixtures.games.map((g) => g.id);
  const client = new pg.Client({ connectionString: await system.checkDatabaseUrl() });
  client.on('error', () => {});
  await client.connect();

  // A receiver and an endpoint per game (decisions accepted and rejected), before the load.
  const endpoints: Endpoint[] = [];
  for (const game of fixtures.games) {
    const receiver = new WebhookReceiver();
    const url = await receiver.start(0);
    const created = await consoleCall(system.urls.gateway, options.identity.developerToken, {
      type: 'createWebhookEndpoint',
      gameId: game.id,
      url,
      eventTypes: ['decision.accepted', 'decision.rejected'],
    });
    receiver.secret = created.secret;
    endpoints.push({ id: created.id, gameId: game.id, receiver });
  }
  const received = () => endpoints.flatMap((e) => e.receiver.received);
  const before = await makeCredentials(system, fixtures, options, 'before');

  const load = startLoad(
    {
      ingestUrl: system.urls.ingest,
      fixtures,
      ratePerSecond: options.rate,
      maxInFlight: options.inFlight,
      duplicateShare: options.duplicates,
      conflictShare: options.conflicts,
      timeoutMs: options.timeoutMs,
    },
    'restore',
  );
  let after: Credentials | undefined;
  let target = '';
  let targetAt = 0;
  let askedAt = 0;
  let lostAt = 0;
  let readyAt = 0;
  let restored: Awaited<ReturnType<typeof backups.restoreTo>> | undefined;
  let oldRows: Array<{ id: string; game_id: string; event_id: string; committed_at: string; before_t: boolean }> = [];
  // How many messages each receiver had: at the loss, and when the programs started on the restored database.
  let receivedAtLoss: number[] = [];
  let receivedAtRestore: number[] = [];
  const counts = () => endpoints.map((e) => e.receiver.received.length);
  try {
    await sleep(BEFORE_FULL_MS);
    const full = await backups.backup('full');
    figures.push(`full backup ${(full.ms / 1000).toFixed(1)} s (${(full.size / 1e6).toFixed(0)} MB)`);
    log(`restore: full backup ${full.label} in ${full.ms} ms under load`);
    await sleep(BETWEEN_BACKUPS_MS);
    const incremental = await backups.backup('incr');
    figures.push(
      `incremental ${(incremental.ms / 1000).toFixed(1)} s (${(incremental.delta / 1e6).toFixed(1)} MB copied)`,
    );
    log(`restore: incremental backup ${incremental.label} in ${incremental.ms} ms under load`);
    await sleep(BEFORE_TARGET_MS);
    // T is read by the server while the query runs: an answer that arrived before the query was sent was committed
    // before T; a request sent after its answer came begins after T.
    askedAt = Date.now();
    const { rows } = await client.query<{ t: string; wal: string }>(
      `select clock_timestamp()::text as t, pg_walfile_name(pg_current_wal_lsn()) as wal`,
    );
    target = rows[0]!.t;
    targetAt = Date.now();
    const targetWal = rows[0]!.wal;
    log(`restore: target time T = ${target} (WAL segment ${targetWal})`);
    await sleep(500);
    after = await makeCredentials(system, fixtures, options, 'after');
    await sleep(AFTER_TARGET_MS);
    // T is restorable once its segment is in the repository: how long after T that took is the loss window a
    // commit at T had (the RPO the archiving gives, bounded by archive_timeout).
    let archivedAt = 0;
    while (Date.now() - targetAt < 60_000) {
      const { rows: archiver } = await client.query<{ wal: string | null }>(
        `select last_archived_wal as wal from pg_stat_archiver`,
      );
      const wal = archiver[0]!.wal?.slice(0, 24) ?? '';
      if (wal >= targetWal) {
        archivedAt = Date.now();
        break;
      }
      await sleep(100);
    }
    if (!archivedAt) throw new Error(`T's WAL segment ${targetWal} was not archived within 60 s`);
    figures.push(
      `T's WAL archived ${((archivedAt - targetAt) / 1000).toFixed(1)} s after T (archive_timeout ${ARCHIVE_TIMEOUT_SECONDS} s)`,
    );
    await load.stop();

    // What the lost server held: every decision of the world's games with its commit time.
    ({ rows: oldRows } = await client.query(
      `select id, game_id, event_id, pg_xact_commit_timestamp(xmin)::text as committed_at,
              pg_xact_commit_timestamp(xmin) <= $2::timestamptz as before_t
         from ledger.events where game_id = any($1::uuid[])`,
      [gameIds, target],
    ));
    await client.end();
    receivedAtLoss = counts();

    // The primary and its standby lost: PostgreSQL stopped at once; the programs stopped.
    lostAt = Date.now();
    postgres.stopImmediately();
    log('restore: PostgreSQL lost (stopped immediately); stopping the programs');
    for (const name of Object.keys(PROGRAMS) as Array<keyof typeof PROGRAMS>) await system.program(name).stop(10_000);
    restored = await backups.restoreTo(target, postgres.port);
    log(`restore: restored to T in ${restored.restoreMs} ms, recovered and promoted in ${restored.recoveryMs} ms`);
    // The current release on the restored database: each program started as a deployment would (no manual step).
    const programsStarted = Date.now();
    // What arrived until now was sent by the programs on the lost server (some of it after the loss: attempts in
    // flight); from here on, by the programs on the restored one.
    receivedAtRestore = counts();
    // A program that exits while starting is started again, as its Deployment would restart it (on a starved
    // machine a program's first NATS connection can be dropped while it loads, which fails its start): counted in
    // the note, at most START_ATTEMPTS starts each.
    const restarts: string[] = [];
    for (const name of Object.keys(PROGRAMS) as Array<keyof typeof PROGRAMS>) {
      const replica = system.program(name);
      for (let attempt = 1; ; attempt++) {
        replica.start();
        try {
          await replica.waitReady();
          break;
        } catch (error) {
          if (attempt >= START_ATTEMPTS || replica.running()) throw error;
          restarts.push(name);
          log(`restore: ${(error as Error).message}; starting it again`);
        }
      }
    }
    readyAt = Date.now();
    if (restarts.length > 0)
      figures.push(`programs started again after exiting while starting: ${restarts.join(', ')}`);
    figures.push(
      `restore ${(restored.restoreMs / 1000).toFixed(1)} s + recovery to T ${(restored.recoveryMs / 1000).toFixed(1)} s + ` +
        `programs ready ${((readyAt - programsStarted) / 1000).toFixed(1)} s = ${((readyAt - lostAt) / 1000).toFixed(1)} s from the loss`,
    );
    log(`restore: every program ready ${readyAt - lostAt} ms after the loss`);
    book.pass(CHECK_RESTORE.drill);
  } catch (error) {
    await load.stop();
    throw error;
  }

  const check = new pg.Client({ connectionString: await system.checkDatabaseUrl() });
  check.on('error', () => {});
  await check.connect();
  try {
    for (const r of load.sent) checkAnswer(book, r);
    // Every decision committed at or before T, and none after.
    const { rows: now } = await check.query<{ id: string }>(
      `select id from ledger.events where game_id = any($1::uuid[])`,
      [gameIds],
    );
    const restoredIds = new Set(now.map((r) => r.id));
    const oldIds = new Set(oldRows.map((r) => r.id));
    let lost = 0;
    for (const row of oldRows) {
      if (row.before_t) {
        book.check(
          CHECK_RESTORE.presentBeforeT,
          restoredIds.has(row.id),
          () => `${row.event_id} committed ${row.committed_at}`,
        );
      } else {
        lost++;
        book.check(
          CHECK_RESTORE.absentAfterT,
          !restoredIds.has(row.id),
          () => `${row.event_id} committed ${row.committed_at}`,
        );
      }
    }
    for (const id of restoredIds) {
      book.check(
        CHECK_RESTORE.absentAfterT,
        oldIds.has(id),
        () => `decision ${id} restored but never on the lost server`,
      );
    }
    figures.push(
      `${oldRows.length - lost} decisions committed at or before T restored, ${lost} committed after T gone`,
    );
    // The clients' view: a decision answered before T is there; an event first sent after T is not.
    const requests = load.sent;
    const restoredRows = await storedRows(
      check,
      requests.map((r) => r.copy.eventId),
    );
    const firstSent = new Map<string, number>();
    for (const r of requests)
      firstSent.set(r.copy.eventId, Math.min(firstSent.get(r.copy.eventId) ?? r.sentAt, r.sentAt));
    for (const r of requests) {
      const row = restoredRows.get(rowKey(r.copy.gameId, r.copy.eventId));
      const d = decisionOf(r);
      if (d && r.answeredAt! <= askedAt) {
        book.check(
          CHECK_RESTORE.answeredBeforeT,
          row?.id === d.id,
          () => `${r.copy.eventId}: decision ${d.id}, row ${row?.id}`,
        );
      }
      if (firstSent.get(r.copy.eventId)! > targetAt) {
        book.check(
          CHECK_RESTORE.sentAfterT,
          row === undefined,
          () => `${r.copy.eventId}: first sent after T, stored ${row?.id}`,
        );
      }
    }

    // Replays before T answer the stored decision; lost decisions, sent again, are decided afresh.
    const firstAnswered = new Map<string, SentRequest>();
    for (const r of requests)
      if (decisionOf(r) && !firstAnswered.has(r.copy.eventId)) firstAnswered.set(r.copy.eventId, r);
    const kept = [...firstAnswered.values()].filter((r) => restoredRows.has(rowKey(r.copy.gameId, r.copy.eventId)));
    const gone = [...firstAnswered.values()].filter((r) => !restoredRows.has(rowKey(r.copy.gameId, r.copy.eventId)));
    const replays = await pool(kept, 8, (r) => send(system.urls.ingest, r.copy, 'replay', options.timeoutMs, r));
    for (const r of replays) {
      checkAnswer(book, r);
      const row = restoredRows.get(rowKey(r.copy.gameId, r.copy.eventId))!;
      const d = decisionOf(r);
      book.check(
        CHECK_RESTORE.replayBeforeT,
        d?.replayed === true && d.id === row.id && sameDecision(d, decisionOf(r.of!)),
        () => `${r.copy.eventId}: stored ${row.id}, answered ${JSON.stringify(r.answer?.body).slice(0, 200)}`,
      );
    }
    const retries = await pool(gone, 8, (r) => send(system.urls.ingest, r.copy, 'retry', options.timeoutMs, r));
    let changed = 0;
    for (const r of retries) {
      checkAnswer(book, r);
      const d = decisionOf(r);
      const old = decisionOf(r.of!)!;
      if (d && (d.status !== old.status || d.reason !== old.reason)) changed++;
      book.check(
        CHECK_RESTORE.decidedAfresh,
        d?.replayed === false && d.id !== old.id,
        () => `${r.copy.eventId}: lost decision ${old.id}, answered ${JSON.stringify(r.answer?.body).slice(0, 200)}`,
      );
    }
    figures.push(
      `${replays.length} replays of decisions before T answered as stored; ${retries.length} events of lost decisions ` +
        `decided afresh (${changed} with another outcome)`,
    );

    // Credentials: the key, permit and invitation made before T work; those made after T are gone.
    const keyStatus = async (c: Credentials) =>
      (
        await send(
          system.urls.ingest,
          freshCopy({ ...c.game, secret: c.secret }, 'restore-key'),
          'fresh',
          options.timeoutMs,
        )
      ).answer?.status;
    const permits = async (c: Credentials) =>
      (await check.query(`select 1 from identity.device_permits where session_id = $1`, [c.sessionId])).rowCount ?? 0;
    const access = (c: Credentials) =>
      http(`${system.urls.gateway}/api/developer/v1/access`, { method: 'GET', token: c.developerToken });
    const credentials = {
      keyBefore: await keyStatus(before),
      keyAfter: after ? await keyStatus(after) : undefined,
      permitBefore: await permits(before),
      permitAfter: after ? await permits(after) : undefined,
      accessBefore: await access(before),
      accessAfter: after ? await access(after) : undefined,
    };
    book.check(
      CHECK_RESTORE.credentials,
      credentials.keyBefore === 200 &&
        credentials.keyAfter === 401 &&
        credentials.permitBefore === 1 &&
        credentials.permitAfter === 0 &&
        credentials.accessBefore === 200 &&
        credentials.accessAfter !== 200,
      () => JSON.stringify(credentials),
    );
    figures.push(
      `key after T: ${credentials.keyAfter}, developer invited after T: ${credentials.accessAfter}, permit after T: ${credentials.permitAfter ? 'kept' : 'gone'}`,
    );

    // The restored service takes events.
    const afterLoad = startLoad(
      {
        ingestUrl: system.urls.ingest,
        fixtures,
        ratePerSecond: options.rate,
        maxInFlight: options.inFlight,
        duplicateShare: options.duplicates,
        conflictShare: options.conflicts,
        timeoutMs: options.timeoutMs,
      },
      'restored',
    );
    await sleep(AFTER_RESTORE_MS);
    await afterLoad.stop();
    for (const r of afterLoad.sent) {
      checkAnswer(book, r);
      book.check(
        CHECK_RESTORE.ready,
        r.answer?.status === 200 || r.answer?.status === 409,
        () =>
          `${r.copy.eventId}: ${r.failure ?? `${r.answer?.status} ${JSON.stringify(r.answer?.body).slice(0, 160)}`}`,
      );
    }

    // Webhooks: the restored outbox drains; what is sent after the restore reports restored decisions only.
    const endpointIds = endpoints.map((e) => e.id);
    const drainStarted = Date.now();
    let pending = -1;
    while (Date.now() - drainStarted < WEBHOOK_DRAIN_MS) {
      const { rows: left } = await check.query<{ n: number }>(
        `select (select count(*) from ledger.webhook_messages where endpoint_id = any($1::uuid[]) and state = 'pending')::int
              + (select count(*) from ledger.webhook_decision_batches)::int as n`,
        [endpointIds],
      );
      pending = left[0]!.n;
      if (pending === 0) break;
      await sleep(250);
    }
    await sleep(500);
    const { rows: messages } = await check.query<{ id: string; decision_id: string }>(
      `select id, decision_id from ledger.webhook_messages where endpoint_id = any($1::uuid[])`,
      [endpointIds],
    );
    const { rows: decided } = await check.query<{ id: string; game_id: string; event_id: string; status: string }>(
      `select id, game_id, event_id, status from ledger.events where game_id = any($1::uuid[])`,
      [gameIds],
    );
    const decidedById = new Map(decided.map((d) => [d.id, d]));
    const messageIds = new Set(messages.map((m) => m.id));
    const all = received();
    const beforeLoss = endpoints.flatMap((e, i) => e.receiver.received.slice(0, receivedAtRestore[i]));
    const afterRestore = endpoints.flatMap((e, i) => e.receiver.received.slice(receivedAtRestore[i]));
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const idsBeforeLoss = new Set(beforeLoss.map((r) => r.id));
    const oldCommit = new Map(oldRows.map((row) => [row.id, row.committed_at]));
    let resent = 0;
    for (const r of afterRestore) {
      const data = dataOf(r);
      const row = data ? decidedById.get(data.id) : undefined;
      book.check(
        CHECK_RESTORE.webhooksRestored,
        row !== undefined && messageIds.has(r.id) && row.event_id === data!.eventId && row.status === data!.status,
        () =>
          `${r.id} (${row ? `decision stored as ${row.status}` : 'decision not stored'}, ` +
          `${messageIds.has(r.id) ? 'in' : 'not in'} the outbox, committed on the lost server ` +
          `${oldCommit.get(data?.id ?? '') ?? 'never'}): ${r.body.slice(0, 160)}`,
      );
      if (idsBeforeLoss.has(r.id)) resent++;
    }
    // One endpoint per game: a decision has one message, so one webhook-id, whichever server made it.
    const webhookIdOf = new Map<string, string>();
    for (const r of all) {
      const data = dataOf(r);
      if (!data) continue;
      const first = webhookIdOf.get(data.id) ?? r.id;
      book.check(
        CHECK_RESTORE.webhooksSameId,
        first === r.id,
        () => `decision ${data.id}: webhook-id ${first} and ${r.id}`,
      );
      webhookIdOf.set(data.id, first);
    }
    const bodyOf = new Map<string, string>();
    for (const r of all) {
      const first = bodyOf.get(r.id) ?? r.body;
      book.check(
        CHECK_RESTORE.webhooksSameBytes,
        first === r.body,
        () => `${r.id}: ${first.slice(0, 120)} / ${r.body.slice(0, 120)}`,
      );
      bodyOf.set(r.id, first);
    }
    const deliveredDecisions = new Set(all.map((r) => dataOf(r)?.id));
    const messageDecisions = new Set(messages.map((m) => m.decision_id));
    book.check(
      CHECK_RESTORE.webhooksDelivered,
      pending === 0,
      () => `${pending} messages still pending after ${WEBHOOK_DRAIN_MS / 1000} s`,
    );
    for (const id of messageDecisions) {
      book.check(CHECK_RESTORE.webhooksDelivered, deliveredDecisions.has(id), () => `decision ${id}: never delivered`);
    }
    const lostDelivered = beforeLoss.filter((r) => {
      const data = dataOf(r);
      return data !== undefined && !decidedById.has(data.id);
    }).length;
    figures.push(
      `webhooks: ${lostDelivered} messages of lost decisions had been delivered (gone now; ` +
        `${sum(receivedAtRestore) - sum(receivedAtLoss)} of all arrived after the loss, attempts in flight), ` +
        `${resent} messages sent again after the restore with their webhook-id, outbox drained ` +
        `${((Date.now() - drainStarted) / 1000).toFixed(1)} s after the load`,
    );

    const invariants = await checkInvariants(check);
    for (const invariant of invariants) {
      book.check(
        `invariant: ${invariant.name}`,
        invariant.violations === 0,
        () => `${invariant.violations} rows, e.g. ${invariant.example}`,
      );
    }
    return {
      requests: [...requests, ...afterLoad.sent],
      retries,
      replays,
      invariants,
      note: `${figures.join('; ')}`,
      outageMs: readyAt - lostAt,
      faultAt: lostAt,
      endedAt: readyAt,
    };
  } finally {
    await check.end().catch(() => {});
    for (const e of endpoints) {
      await consoleCall(system.urls.gateway, options.identity.developerToken, {
        type: 'deleteWebhookEndpoint',
        webhookEndpointId: e.id,
      }).catch(() => {});
      await e.receiver.stop();
    }
  }
}

function sameDecision(a: ReturnType<typeof decisionOf>, b: ReturnType<typeof decisionOf>): boolean {
  if (!a || !b) return false;
  return JSON.stringify({ ...a, replayed: undefined }) === JSON.stringify({ ...b, replayed: undefined });
}
