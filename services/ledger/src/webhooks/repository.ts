// The webhook tables of the ledger schema (migration 0014): what the console actions write inside their transaction
// (WebhookTx), the console's reads, and the delivery worker's statements (WebhookRepository). Arrays travel as JSON
// text and come back as JSON text, one spelling for every driver.
import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Database } from '#runtime/db/database.ts';
import { isoSql } from '#runtime/db/sql.ts';
import { invariant } from '#runtime/invariant.ts';
import type { Statement } from '../console/read-repository.ts';
import { type DecisionRow, decisionColumns, decisionRow } from '../db/decision-rows.ts';
import { type Field, flag, numeric, optionalText, queryRows, rowReader, text } from '../db/rows.ts';
import { endpointsOfGameLockKey } from './limits.ts';

export interface EndpointRow {
  id: string;
  gameId: string;
  organizationId: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | undefined;
  failingSince: string | undefined;
  createdAt: string;
  previousSecretExpiresAt: string | undefined;
}

const jsonList =
  (column: string): Field<string[]> =>
  (row) =>
    JSON.parse(text(column)(row)) as string[];

const endpointRow = rowReader<EndpointRow>({
  id: text('id'),
  gameId: text('game_id'),
  organizationId: text('organization_id'),
  url: text('url'),
  eventTypes: jsonList('event_types'),
  enabled: flag('enabled'),
  disabledReason: optionalText('disabled_reason'),
  failingSince: optionalText('failing_since'),
  createdAt: text('created_at'),
  previousSecretExpiresAt: optionalText('previous_secret_expires_at'),
});
// The previous secret's end only while it still signs (the worker's rule): an overlap that ended reads as none.
const ENDPOINT_COLUMNS = `e.id, e.game_id, e.organization_id, e.url, array_to_json(e.event_types)::text as event_types,
  e.enabled, e.disabled_reason, ${isoSql('e.failing_since', 'failing_since')}, ${isoSql('e.created_at', 'created_at')},
  ${isoSql('case when e.previous_secret_ciphertext is not null and e.previous_secret_expires_at > now() then e.previous_secret_expires_at end', 'previous_secret_expires_at')}`;

/** What a deliveries read may be narrowed to (every field optional). */
export interface DeliveryFilter {
  state?: string | undefined;
  eventType?: string | undefined;
  /** created_at in [fromMicros, toMicros), epoch microseconds. */
  fromMicros?: bigint | undefined;
  toMicros?: bigint | undefined;
  /** The message's id: its webhook-id. */
  webhookId?: string | undefined;
}

/** The webhook statements of one console action's transaction. */
export class WebhookTx {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * Serializes the creation of one game's endpoints until the transaction ends (the same lock as the database's
   * trigger webhook_endpoints_per_game), then counts them.
   */
  async lockAndCountEndpointsOfGame(gameId: string): Promise<number> {
    await queryRows(this.em, 'select pg_advisory_xact_lock(hashtext(?))', [endpointsOfGameLockKey(gameId)]);
    const rows = await queryRows(this.em, 'select count(*)::int as n from ledger.webhook_endpoints where game_id = ?', [
      gameId,
    ]);
    return numeric('n')(rows[0] ?? { n: 0 });
  }

  async insertEndpoint(endpoint: {
    gameId: string;
    organizationId: string;
    url: string;
    eventTypes: string[];
    secretCiphertext: Buffer;
  }): Promise<string> {
    const id = randomUUID();
    await this.em.execute(
      `insert into ledger.webhook_endpoints (id, game_id, organization_id, url, event_types, secret_ciphertext)
       values (?, ?, ?, ?, array(select jsonb_array_elements_text(?::jsonb)), ?)`,
      [
        id,
        endpoint.gameId,
        endpoint.organizationId,
        endpoint.url,
        JSON.stringify(endpoint.eventTypes),
        endpoint.secretCiphertext,
      ],
    );
    return id;
  }

  /** The endpoint, locked against other console writers and the worker's claims (for no key update). */
  async lockEndpoint(id: string): Promise<EndpointRow | undefined> {
    const row = (
      await queryRows(
        this.em,
        `select ${ENDPOINT_COLUMNS} from ledger.webhook_endpoints e where e.id = ? for no key update`,
        [id],
      )
    )[0];
    return row === undefined ? undefined : endpointRow(row);
  }

  async updateEndpoint(id: string, changes: { url?: string; eventTypes?: string[]; enabled?: boolean }): Promise<void> {
    const enabled = changes.enabled ?? null;
    await this.em.execute(
      `update ledger.webhook_endpoints set
         url = coalesce(?, url),
         event_types = case when ?::jsonb is null then event_types
                            else array(select jsonb_array_elements_text(?::jsonb)) end,
         enabled = coalesce(?::boolean, enabled),
         disabled_reason = case when ?::boolean is null then disabled_reason when ? then null else 'developer' end,
         failing_since = case when ?::boolean then null else failing_since end,
         updated_at = now()
       where id = ?`,
      [
        changes.url ?? null,
        changes.eventTypes === undefined ? null : JSON.stringify(changes.eventTypes),
        changes.eventTypes === undefined ? null : JSON.stringify(changes.eventTypes),
        enabled,
        enabled,
        enabled,
        enabled,
        id,
      ],
    );
  }

  async deleteEndpoint(id: string): Promise<void> {
    await this.em.execute(`delete from ledger.webhook_endpoints where id = ?`, [id]);
  }

  /**
   * The new secret; the one it replaces signs as well for `overlapSeconds` more (0: not at all). A rotation during an
   * overlap ends the earlier one: only the secret replaced now keeps signing.
   */
  async setSecret(id: string, secretCiphertext: Buffer, overlapSeconds = 0): Promise<void> {
    await this.em.execute(
      `update ledger.webhook_endpoints
          set previous_secret_ciphertext = case when ? > 0 then secret_ciphertext end,
              previous_secret_expires_at = case when ? > 0 then now() + ? * interval '1 second' end,
              secret_ciphertext = ?, updated_at = now()
        where id = ?`,
      [overlapSeconds, overlapSeconds, overlapSeconds, secretCiphertext, id],
    );
  }

  /**
   * A message with data (not a decision) to every enabled endpoint of the game subscribed to its type, or to one
   * endpoint (`endpointId`, sendTestWebhook: whatever its types); the messages' ids.
   */
  async insertMessages(
    to: { gameId: string } | { endpointId: string },
    eventType: string,
    data: Record<string, unknown>,
  ): Promise<string[]> {
    const rows = await queryRows(
      this.em,
      'endpointId' in to
        ? `insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, next_attempt_at)
           select gen_random_uuid(), e.id, e.game_id, ?, ?::jsonb, now() from ledger.webhook_endpoints e where e.id = ?
           returning id`
        : `insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, data, next_attempt_at)
           select gen_random_uuid(), e.id, e.game_id, ?, ?::jsonb, now() from ledger.webhook_endpoints e
            where e.game_id = ? and e.enabled and ? = any(e.event_types)
           returning id`,
      'endpointId' in to
        ? [eventType, JSON.stringify(data), to.endpointId]
        : [eventType, JSON.stringify(data), to.gameId, eventType],
    );
    return rows.map(text('id'));
  }

  /** The endpoint of a message (never changes), for finding its organization before anything is locked. */
  async endpointOfMessage(messageId: string): Promise<string | undefined> {
    const row = (
      await queryRows(this.em, `select endpoint_id from ledger.webhook_messages where id = ?`, [messageId])
    )[0];
    return row === undefined ? undefined : text('endpoint_id')(row);
  }

  /**
   * Makes every failed message of the endpoint written at or after `since` pending and due now (recover), as
   * redeliver does one; none when more than `most` match (the count read first, up to `most + 1`). The number made
   * pending, or undefined when there were too many.
   */
  async recoverFailed(endpointId: string, since: string, most: number): Promise<number | undefined> {
    const [counted] = await queryRows(
      this.em,
      `select count(*)::int as n from (
         select 1 from ledger.webhook_messages
          where endpoint_id = ? and created_at >= ?::timestamptz and state = 'failed' limit ?) f`,
      [endpointId, since, most + 1],
    );
    if (numeric('n')(counted ?? { n: 0 }) > most) return undefined;
    const rows = await queryRows(
      this.em,
      `update ledger.webhook_messages
          set state = 'pending', next_attempt_at = now(), retry_started_at = now(), finished_at = null
        where endpoint_id = ? and created_at >= ?::timestamptz and state = 'failed'
       returning id`,
      [endpointId, since],
    );
    return rows.length;
  }

  /** Makes a message pending and due now (redeliver); its id, so its webhook-id, stays. */
  async redeliver(messageId: string): Promise<void> {
    await this.em.execute(
      `update ledger.webhook_messages
          set state = 'pending', next_attempt_at = now(), retry_started_at = now(), finished_at = null
        where id = ? and (state <> 'pending' or in_flight_until is null or in_flight_until <= now())`,
      [messageId],
    );
  }
}

/**
 * One page of an endpoint's messages, newest first by (created_at, id), with every attempt of each; the filters
 * narrow the range of webhook_messages_by_endpoint (endpoint_id, created_at desc, id desc), which leads with the
 * endpoint: the window bounds the range, state and type are checked on the rows it reads, a webhook-id is one row.
 */
export function deliveriesStatement(
  endpointId: string,
  after: { createdAt: string; id: string } | undefined,
  take: number,
  filter: DeliveryFilter = {},
): Statement {
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (after) {
    conditions.push('(m.created_at, m.id) < (?::timestamptz, ?::uuid)');
    values.push(after.createdAt, after.id);
  }
  if (filter.state !== undefined) {
    conditions.push('m.state = ?');
    values.push(filter.state);
  }
  if (filter.eventType !== undefined) {
    conditions.push('m.event_type = ?');
    values.push(filter.eventType);
  }
  if (filter.fromMicros !== undefined) {
    conditions.push("m.created_at >= 'epoch'::timestamptz + ?::bigint * interval '1 microsecond'");
    values.push(String(filter.fromMicros));
  }
  if (filter.toMicros !== undefined) {
    conditions.push("m.created_at < 'epoch'::timestamptz + ?::bigint * interval '1 microsecond'");
    values.push(String(filter.toMicros));
  }
  if (filter.webhookId !== undefined) {
    conditions.push('m.id = ?::uuid');
    values.push(filter.webhookId);
  }
  return {
    sql: `select ${MESSAGE_BODY_COLUMNS}, m.endpoint_id, m.state, ${isoSql('m.next_attempt_at', 'next_attempt_at')},
              ${isoSql('m.finished_at', 'finished_at')},
              to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at,
              (select coalesce(json_agg(json_build_object('attempt', a.attempt,
                   'startedAt', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   'latencyMs', a.latency_ms, 'statusCode', a.status_code, 'error', a.error,
                   'responseExcerpt', a.response_excerpt) order by a.attempt), '[]')::text
                 from ledger.webhook_attempts a where a.message_id = m.id) as attempts
         from ledger.webhook_messages m left join ledger.events d on d.id = m.decision_id and d.game_id = m.game_id
        where m.endpoint_id = ?
          ${conditions.map((c) => `and ${c}`).join('\n          ')}
        order by m.created_at desc, m.id desc
        limit ?`,
    params: [endpointId, ...values, take],
  };
}

/** The smallest UUID: a round robin with no endpoint served yet starts at the first. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** A message claimed for one attempt, with what rendering and signing it needs. */
export interface ClaimedMessage {
  id: string;
  endpointId: string;
  /** The endpoint's organization (the worker's share per organization). */
  organizationId: string;
  url: string;
  secretCiphertext: Buffer;
  /** The secret a rotation replaced, while its overlap lasts (it signs as well). */
  previousSecretCiphertext: Buffer | undefined;
  eventType: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  createdAt: string;
  retryStartedAtMs: number;
  /** The message's data (JSON text), or the decision it reports. */
  data: string | undefined;
  decision: DecisionRow | undefined;
}

/** The columns a message's body is rendered from (m: the message, d: its decision, if any, its columns `d_`...). */
const MESSAGE_BODY_COLUMNS = `m.id, m.event_type, ${isoSql('m.created_at', 'created_at')}, m.data::text as data,
  ${decisionColumns('d', 'd_')}`;
const decisionFields = decisionRow('d_');

function bodyFields(row: Record<string, unknown>) {
  return {
    data: optionalText('data')(row),
    decision: row.d_id === null || row.d_id === undefined ? undefined : decisionFields(row),
  };
}

export interface AttemptOutcome {
  startedAt: Date;
  latencyMs: number;
  statusCode: number | undefined;
  error: string | undefined;
  responseExcerpt: string;
}

/** What follows an attempt: delivered (2xx), another attempt after `retryInMs`, or failed for good. */
export type AttemptNext = { kind: 'delivered' } | { kind: 'retry'; retryInMs: number } | { kind: 'failed' };

export interface AttemptRow {
  attempt: number;
  startedAt: string;
  latencyMs: number;
  statusCode: number | undefined;
  error: string | undefined;
  responseExcerpt: string;
}

export interface DeliveryRow {
  id: string;
  endpointId: string;
  eventType: string;
  state: string;
  createdAt: string;
  nextAttemptAt: string | undefined;
  finishedAt: string | undefined;
  positionAt: string;
  data: string | undefined;
  decision: DecisionRow | undefined;
  attempts: AttemptRow[];
}

export class WebhookRepository {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /**
   * The key secrets are encrypted with when WEBHOOK_SECRET_KEY is not set: 32 random bytes created on first use in
   * ledger.settings (every replica inserts a candidate and reads back the one that won).
   */
  async databaseSecretKey(candidate: Buffer): Promise<Buffer> {
    // The settings row may not exist yet (the cursor key is made on first use too): a candidate for both, and the
    // winner read back in the same statement.
    const rows = await this.db.transaction((em) =>
      queryRows(
        em,
        `insert into ledger.settings (id, cursor_key, webhook_secret_key) values (true, ?, ?)
         on conflict (id) do update
           set webhook_secret_key = coalesce(ledger.settings.webhook_secret_key, excluded.webhook_secret_key)
         returning webhook_secret_key`,
        [randomBytes(32), candidate],
      ),
    );
    const key = rows[0]?.webhook_secret_key as Buffer | undefined;
    if (key?.length !== 32) throw new Error('ledger.settings.webhook_secret_key is missing or malformed');
    return key;
  }

  /**
   * Makes the messages of the oldest `batchesMax` rows of decision pairs that ledger.record_events wrote
   * (migration 0015) and deletes those rows, in one statement: each message exactly once, whichever replica does it
   * (FOR UPDATE SKIP LOCKED), created at its call's time and due then. A pair whose endpoint was deleted meanwhile
   * makes nothing (the endpoint's messages would have gone with it). A message's id is a function of its endpoint and
   * decision (the first 122 bits of SHA-256 of both ids, as a version 8 UUID): made again from the same row, after a
   * restore to a time before it was made, it gets the id its receiver may already have seen (docs/operations.md,
   * "Restoring"); a message made already (the same id: a row restored beside the messages made of it) is kept as it
   * is. The number of rows made into messages.
   */
  async expandDecisionBatches(batchesMax: number): Promise<number> {
    const rows = await this.db.transaction((em) =>
      queryRows(
        em,
        `with batches as (
           delete from ledger.webhook_decision_batches b
            where b.id in (select id from ledger.webhook_decision_batches order by id limit ? for update skip locked)
           returning b.created_at, b.endpoint_ids, b.decision_ids),
         made as (
           insert into ledger.webhook_messages (id, endpoint_id, game_id, event_type, decision_id, created_at,
               retry_started_at, next_attempt_at)
             select overlay(overlay(k.h placing '8' from 13)
                      placing substr('89ab', get_byte(decode(k.h, 'hex'), 8) % 4 + 1, 1) from 17)::uuid,
                    w.id, w.game_id, 'decision.' || d.status, d.id, b.created_at, b.created_at, b.created_at
               from batches b
               cross join lateral unnest(b.endpoint_ids, b.decision_ids) as p(endpoint_id, decision_id)
               join ledger.webhook_endpoints w on w.id = p.endpoint_id
               join ledger.events d on d.id = p.decision_id and d.game_id = w.game_id
               cross join lateral (select left(encode(sha256(convert_to(w.id::text || '/' || d.id::text, 'UTF8')),
                 'hex'), 32) as h) k
             order by b.created_at, d.created_at, d.id
             on conflict (id) do nothing)
         select count(*)::int as batches from batches`,
        [batchesMax],
      ),
    );
    return numeric('batches')(rows[0] ?? { batches: 0 });
  }

  /**
   * Claims due messages for one attempt each, in one short transaction, fairly across endpoints and organizations:
   * - the endpoints: enabled ones with a due message and room under their in-flight bound (`inFlightMax`, counted
   *   across replicas), whose organization has room in this process (`organizationRoom`, absent: room), taken round
   *   robin from the one after `after` in id order (no id order decides who is served), locked (skipping those another
   *   replica holds);
   * - then, in the next statement, per endpoint up to its room, `webhook.test` messages first (a test never waits
   *   behind the endpoint's backlog), then the oldest due (FOR UPDATE SKIP LOCKED), and per organization no more than
   *   its room (`organizationRoom`, default `organizationInFlightMax`).
   * A claimed message is in flight for `leaseMs`: no replica claims it again before then, and a worker that dies
   * mid-attempt leaves it to be claimed again after it (the same webhook-id).
   */
  claim(options: {
    endpointsMax: number;
    inFlightMax: number;
    leaseMs: number;
    /** The last endpoint served: the round robin starts after it. */
    after?: string;
    /** Organizations' remaining room in this process; an organization not named has `organizationInFlightMax`. */
    organizationRoom?: Record<string, number>;
    organizationInFlightMax?: number;
  }): Promise<ClaimedMessage[]> {
    const organizationInFlightMax = options.organizationInFlightMax ?? Number.MAX_SAFE_INTEGER;
    const organizationRoom = JSON.stringify(options.organizationRoom ?? {});
    return this.db.transaction(async (em) => {
      // Two statements: the count of an endpoint's deliveries in flight must be read after its row is locked, in a
      // snapshot that sees every claim committed by the replica that held the lock before (read committed takes a
      // snapshot per statement; one statement would count in the snapshot it started with).
      const locked = await queryRows(
        em,
        `select e.id from ledger.webhook_endpoints e
          where e.enabled and exists (
            select 1 from ledger.webhook_messages m
             where m.endpoint_id = e.id and m.state = 'pending' and m.next_attempt_at <= now()
               and (m.in_flight_until is null or m.in_flight_until <= now()))
            and (select count(*) from ledger.webhook_messages f
                  where f.endpoint_id = e.id and f.state = 'pending' and f.in_flight_until is not null
                    and f.in_flight_until > now()) < ?::int
            and coalesce((?::jsonb ->> e.organization_id::text)::int, 1) > 0
          order by e.id <= ?::uuid, e.id limit ? for no key update skip locked`,
        [options.inFlightMax, organizationRoom, options.after ?? NIL_UUID, options.endpointsMax],
      );
      if (locked.length === 0) return [];
      const rows = await queryRows(
        em,
        `with endpoints as (
           select e.id, e.url, e.secret_ciphertext, e.organization_id,
                  case when e.previous_secret_expires_at > now() then e.previous_secret_ciphertext end
                    as previous_secret_ciphertext,
                  greatest(?::int - (select count(*) from ledger.webhook_messages f
                                      where f.endpoint_id = e.id and f.state = 'pending'
                                        and f.in_flight_until is not null and f.in_flight_until > now()), 0) as room
             from ledger.webhook_endpoints e
            where e.id in (select value::uuid from jsonb_array_elements_text(?::jsonb))),
         tests as (
           select p.id, e.id as endpoint_id, 0 as class, p.next_attempt_at from endpoints e cross join lateral (
             select m.id, m.next_attempt_at from ledger.webhook_messages m
              where m.endpoint_id = e.id and m.state = 'pending' and m.event_type = 'webhook.test'
                and m.next_attempt_at <= now() and (m.in_flight_until is null or m.in_flight_until <= now())
              order by m.next_attempt_at, m.id limit e.room
              for update skip locked) p),
         rest as (
           select p.id, e.id as endpoint_id, 1 as class, p.next_attempt_at from endpoints e cross join lateral (
             select m.id, m.next_attempt_at from ledger.webhook_messages m
              where m.endpoint_id = e.id and m.state = 'pending' and m.event_type <> 'webhook.test'
                and m.next_attempt_at <= now() and (m.in_flight_until is null or m.in_flight_until <= now())
              order by m.next_attempt_at, m.id
              limit greatest(e.room - (select count(*) from tests t where t.endpoint_id = e.id), 0)
              for update skip locked) p),
         ranked as (
           select c.id, c.endpoint_id,
                  row_number() over (partition by e.organization_id order by c.class, c.next_attempt_at, c.id) as n,
                  coalesce((?::jsonb ->> e.organization_id::text)::bigint, ?::bigint) as organization_room
             from (select * from tests union all select * from rest) c join endpoints e on e.id = c.endpoint_id),
         picked as (
           select r.id, e.url, e.secret_ciphertext, e.previous_secret_ciphertext, e.organization_id
             from ranked r join endpoints e on e.id = r.endpoint_id where r.n <= r.organization_room),
         claimed as (
           update ledger.webhook_messages m
              set in_flight_until = now() + make_interval(secs => ?::double precision / 1000),
                  attempts = m.attempts + 1
             from picked where m.id = picked.id
           returning m.*, picked.url, picked.secret_ciphertext, picked.previous_secret_ciphertext,
             picked.organization_id as endpoint_organization_id)
         select ${MESSAGE_BODY_COLUMNS}, m.endpoint_id, m.endpoint_organization_id, m.url, m.secret_ciphertext,
                m.previous_secret_ciphertext,
                m.attempts, (extract(epoch from m.retry_started_at) * 1000)::float8 as retry_started_ms
           from claimed m left join ledger.events d on d.id = m.decision_id and d.game_id = m.game_id`,
        [
          options.inFlightMax,
          JSON.stringify(locked.map(text('id'))),
          organizationRoom,
          organizationInFlightMax,
          options.leaseMs,
        ],
      );
      const claimed = rows.map((row) => ({
        id: text('id')(row),
        endpointId: text('endpoint_id')(row),
        organizationId: text('endpoint_organization_id')(row),
        url: text('url')(row),
        secretCiphertext: row.secret_ciphertext as Buffer,
        previousSecretCiphertext: (row.previous_secret_ciphertext as Buffer | null) ?? undefined,
        eventType: text('event_type')(row),
        attempt: numeric('attempts')(row),
        createdAt: text('created_at')(row),
        retryStartedAtMs: numeric('retry_started_ms')(row),
        ...bodyFields(row),
      }));
      // The claim's bounds: at most `inFlightMax` of an endpoint's messages (less those in flight already), of at most
      // `endpointsMax` endpoints, and no organization past its room.
      const perEndpoint = new Map<string, number>();
      const perOrganization = new Map<string, number>();
      for (const { endpointId, organizationId } of claimed) {
        perEndpoint.set(endpointId, (perEndpoint.get(endpointId) ?? 0) + 1);
        perOrganization.set(organizationId, (perOrganization.get(organizationId) ?? 0) + 1);
      }
      const roomOf = (organizationId: string) => options.organizationRoom?.[organizationId] ?? organizationInFlightMax;
      invariant(
        perEndpoint.size <= options.endpointsMax &&
          [...perEndpoint.values()].every((count) => count <= options.inFlightMax) &&
          [...perOrganization.entries()].every(([organizationId, count]) => count <= roomOf(organizationId)),
        'webhook_claim_in_flight_bound',
        () => ({ ...options, claimed: Object.fromEntries(perEndpoint) }),
      );
      return claimed;
    });
  }

  /**
   * Records an attempt and what follows, in one transaction: the attempt row; the message delivered, due again or
   * failed (only if it is still this attempt's claim: a redeliver or a later claim wins); the endpoint's failure
   * record (failing_since set at the first failure, cleared by a 2xx) and, when it has failed for `disableAfterMs`,
   * the endpoint disabled with reason `failing`.
   */
  async finish(
    message: { id: string; endpointId: string; attempt: number },
    outcome: AttemptOutcome,
    next: AttemptNext,
    disableAfterMs: number,
  ): Promise<void> {
    await this.db.transaction(async (em) => {
      await em.execute(
        `insert into ledger.webhook_attempts
           (message_id, attempt, started_at, latency_ms, status_code, error, response_excerpt)
         values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
        [
          message.id,
          message.attempt,
          outcome.startedAt.toISOString(),
          Math.max(0, Math.round(outcome.latencyMs)),
          outcome.statusCode ?? null,
          outcome.error?.slice(0, 500) ?? null,
          outcome.responseExcerpt,
        ],
      );
      await em.execute(
        `update ledger.webhook_messages
            set state = ?, in_flight_until = null,
                next_attempt_at = case when ? = 'pending' then now() + make_interval(secs => ?::double precision / 1000) end,
                finished_at = case when ? = 'pending' then null else now() end
          where id = ? and attempts = ? and state = 'pending'`,
        [
          next.kind === 'retry' ? 'pending' : next.kind,
          next.kind === 'retry' ? 'pending' : next.kind,
          next.kind === 'retry' ? next.retryInMs : 0,
          next.kind === 'retry' ? 'pending' : next.kind,
          message.id,
          message.attempt,
        ],
      );
      if (next.kind === 'delivered') {
        await em.execute(
          `update ledger.webhook_endpoints set failing_since = null where id = ? and failing_since is not null`,
          [message.endpointId],
        );
      } else {
        await em.execute(
          `update ledger.webhook_endpoints
              set failing_since = coalesce(failing_since, ?::timestamptz),
                  enabled = case when coalesce(failing_since, ?::timestamptz)
                                      <= now() - make_interval(secs => ?::double precision / 1000)
                                 then false else enabled end,
                  disabled_reason = case when coalesce(failing_since, ?::timestamptz)
                                              <= now() - make_interval(secs => ?::double precision / 1000)
                                         then coalesce(disabled_reason, 'failing') else disabled_reason end
            where id = ?`,
          [
            outcome.startedAt.toISOString(),
            outcome.startedAt.toISOString(),
            disableAfterMs,
            outcome.startedAt.toISOString(),
            disableAfterMs,
            message.endpointId,
          ],
        );
      }
    });
  }

  /**
   * Disables, with the reason `backlog`, every enabled endpoint with more than `pendingMax` messages pending made
   * since it was last changed, so that its outbox stops growing (a disabled endpoint is subscribed to nothing:
   * ledger.record_events writes it no more messages). Made since it was last changed: an endpoint the developer
   * enables again keeps delivering its backlog, and is disabled again only if `pendingMax` more pile up. A check reads
   * an endpoint's pending messages up to the `pendingMax + 1`-th that counts. The endpoints disabled, with their game
   * and organization.
   */
  async disableBackloggedEndpoints(
    pendingMax: number,
  ): Promise<Array<{ id: string; gameId: string; organizationId: string }>> {
    const rows = await this.db.transaction((em) =>
      queryRows(
        em,
        `update ledger.webhook_endpoints e
            set enabled = false, disabled_reason = 'backlog', updated_at = now()
          where e.enabled
            and exists (select 1 from ledger.webhook_messages m
                         where m.endpoint_id = e.id and m.state = 'pending' and m.created_at > e.updated_at
                         offset ? limit 1)
          returning e.id, e.game_id, e.organization_id`,
        [pendingMax],
      ),
    );
    return rows.map((row) => ({
      id: text('id')(row),
      gameId: text('game_id')(row),
      organizationId: text('organization_id')(row),
    }));
  }

  /** A game's endpoints (no secrets), oldest first. */
  async listEndpoints(gameId: string): Promise<EndpointRow[]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select ${ENDPOINT_COLUMNS} from ledger.webhook_endpoints e where e.game_id = ? order by e.created_at, e.id`,
      [gameId],
    );
    return rows.map(endpointRow);
  }

  /** The endpoint's game and organization (never change). */
  async endpointScope(endpointId: string): Promise<{ gameId: string; organizationId: string } | undefined> {
    const rows = await this.db.query<{ game_id: string; organization_id: string }>(
      `select game_id, organization_id from ledger.webhook_endpoints where id = ?`,
      [endpointId],
    );
    const row = rows[0];
    return row && { gameId: row.game_id, organizationId: row.organization_id };
  }

  /** One page of an endpoint's messages (deliveriesStatement), with every attempt of each. */
  async listDeliveries(
    endpointId: string,
    after: { createdAt: string; id: string } | undefined,
    take: number,
    filter: DeliveryFilter = {},
  ): Promise<DeliveryRow[]> {
    const statement = deliveriesStatement(endpointId, after, take, filter);
    const rows = await this.db.query<Record<string, unknown>>(statement.sql, statement.params);
    return rows.map((row) => ({
      id: text('id')(row),
      endpointId: text('endpoint_id')(row),
      eventType: text('event_type')(row),
      state: text('state')(row),
      createdAt: text('created_at')(row),
      nextAttemptAt: optionalText('next_attempt_at')(row),
      finishedAt: optionalText('finished_at')(row),
      positionAt: text('position_at')(row),
      ...bodyFields(row),
      attempts: (
        JSON.parse(text('attempts')(row)) as Array<{
          attempt: number;
          startedAt: string;
          latencyMs: number;
          statusCode: number | null;
          error: string | null;
          responseExcerpt: string;
        }>
      ).map((a) => ({ ...a, statusCode: a.statusCode ?? undefined, error: a.error ?? undefined })),
    }));
  }
}
