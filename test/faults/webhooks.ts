// The fault `webhook-receiver-down` (docs/reliability.md): one webhook endpoint per game, subscribed
// to decision.accepted and decision.rejected, on a real local receiver per game that verifies every signature with
// the `standardwebhooks` package (test/support/webhook-receiver.ts). While the phase's event load runs, the
// receivers are down for 60 s (nothing listens: connection refused), then back; once the backlog flows, the ledger
// is SIGKILLed mid-delivery and restarted. Afterwards: every accepted or rejected decision of the phase was
// delivered at least once, duplicates only with the same webhook-id, nothing delivered that was not decided.
import type pg from 'pg';
import { type ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver.ts';
import type { CheckBook } from './checks.ts';
import { consoleCall, type Fixtures } from './fixtures.ts';
import type { FaultSystem } from './system.ts';

/** How long the receivers are down (CONTRACT section 11.1's fault). */
export const RECEIVER_DOWN_MS = 60_000;
/** The ledger is killed once this many messages arrived after the receivers came back (the backlog is flowing). */
const KILL_AFTER_DELIVERIES = 40;
/** How long the phase waits, after its load and retries, for every decision's message. */
const SETTLE_TIMEOUT_MS = 120_000;

/**
 * The ledger's webhook settings for the suite: private addresses (the receivers are on 127.0.0.1), and retries at
 * most 15 s apart (22.5 s with the jitter) so that the backlog is due soon after the receivers are back; the claim's
 * lease (15 s timeout + 15 s) bounds the redelivery of what the killed ledger had in flight.
 */
export const WEBHOOK_FAULT_ENV = {
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
  WEBHOOK_RETRY_BASE_MS: '1000',
  WEBHOOK_RETRY_DELAY_MAX_MS: '15000',
  WEBHOOK_POLL_INTERVAL_MS: '200',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Endpoint {
  id: string;
  gameId: string;
  port: number;
  receiver: WebhookReceiver;
}

interface DecisionData {
  id: string;
  eventId: string;
  gameId: string;
  status: string;
  reason: string | null;
  rewardCredits: number;
}

export const CHECK_WEBHOOK = {
  signatures: 'webhooks: every request carried a valid signature (standardwebhooks verify)',
  delivered: 'webhooks: every accepted or rejected decision of the phase delivered at least once',
  sameId: 'webhooks: duplicates only with the same webhook-id',
  decided: 'webhooks: nothing delivered that was not decided (the stored decision, its game and status)',
  outbox: 'webhooks: every decision of the phase has its message in the outbox',
} as const;

export class WebhookReceiverFault {
  private endpoints: Endpoint[] = [];
  private gateway = '';
  private developerToken = '';
  /** The database's clock when the endpoints existed: the phase's decisions are those created from then on. */
  private since = '';
  private backAt = 0;

  /** Before the phase's load: a receiver and an endpoint per game (of `games`, default all). */
  async prepare(
    system: FaultSystem,
    fixtures: Fixtures,
    developerToken: string,
    client: pg.Client,
    games = fixtures.games,
  ): Promise<void> {
    this.gateway = system.urls.gateway;
    this.developerToken = developerToken;
    for (const game of games) {
      const receiver = new WebhookReceiver();
      const url = await receiver.start(0);
      const created = await consoleCall(this.gateway, developerToken, {
        type: 'createWebhookEndpoint',
        gameId: game.id,
        url,
        eventTypes: ['decision.accepted', 'decision.rejected'],
      });
      receiver.secret = created.secret;
      this.endpoints.push({ id: created.id, gameId: game.id, port: Number(new URL(url).port), receiver });
    }
    const { rows } = await client.query<{ now: string }>(`select now()::text as now`);
    this.since = rows[0]!.now;
  }

  private received(): ReceivedWebhook[] {
    return this.endpoints.flatMap((e) => e.receiver.received);
  }

  /** The receivers down for 60 s, back; the ledger killed while the backlog is being delivered, then restarted. */
  async inject(system: FaultSystem): Promise<{ endedAt: number; note: string }> {
    await Promise.all(this.endpoints.map((e) => e.receiver.stop()));
    const receivedBefore = this.received().length;
    await sleep(RECEIVER_DOWN_MS);
    for (const e of this.endpoints) await e.receiver.start(e.port);
    this.backAt = Date.now();
    const deadline = Date.now() + 30_000;
    const backlog = () => this.received().length - receivedBefore;
    while (backlog() < KILL_AFTER_DELIVERIES && Date.now() < deadline) await sleep(20);
    const deliveredBeforeKill = backlog();
    if (deliveredBeforeKill < KILL_AFTER_DELIVERIES)
      throw new Error(`only ${deliveredBeforeKill} messages arrived within 30 s of the receivers being back`);
    await system.kill('ledger');
    await system.restart('ledger');
    return {
      endedAt: Date.now(),
      note: `receivers down ${RECEIVER_DOWN_MS / 1000} s; the ledger SIGKILLed after ${deliveredBeforeKill} messages of the backlog arrived, restarted`,
    };
  }

  /**
   * After the phase's load, retries and replays: waits until every decision of the phase (stored since the endpoints
   * existed) has arrived, then checks the deliveries against the stored decisions. Answers a note of the figures.
   * `once`: also checks, under that name, that no message (webhook-id) arrived twice.
   */
  async settle(book: CheckBook, client: pg.Client, options: { once?: string } = {}): Promise<string> {
    const gameIds = this.endpoints.map((e) => e.gameId);
    const { rows: decisions } = await client.query<{ id: string; game_id: string; status: string; message: boolean }>(
      `select e.id, e.game_id, e.status,
              (exists (select 1 from ledger.webhook_messages m where m.decision_id = e.id and m.game_id = e.game_id)
               or exists (select 1 from ledger.webhook_decision_batches b where e.id = any(b.decision_ids))) as message
         from ledger.events e where e.game_id = any($1::uuid[]) and e.created_at >= $2::timestamptz`,
      [gameIds, this.since],
    );
    for (const d of decisions) book.check(CHECK_WEBHOOK.outbox, d.message, () => `decision ${d.id}: no message`);
    const arrived = () => new Set(this.received().map((r) => dataOf(r)?.id));
    const settleStarted = Date.now();
    const deadline = settleStarted + SETTLE_TIMEOUT_MS;
    // The set once per look (per decision it would be quadratic: with thousands of messages, an event loop blocked
    // for seconds, and the receivers in this process not answering).
    const waiting = () => {
      const ids = arrived();
      return decisions.some((d) => !ids.has(d.id));
    };
    while (waiting() && Date.now() < deadline) await sleep(250);
    const drainedAt = Date.now();

    const ids = arrived();
    for (const d of decisions)
      book.check(CHECK_WEBHOOK.delivered, ids.has(d.id), () => `decision ${d.id} (${d.status}) never arrived`);
    const { rows: stored } = await client.query<{ id: string; game_id: string; status: string; event_id: string }>(
      `select id, game_id, status, event_id from ledger.events where id = any($1::uuid[])`,
      [[...ids].filter(Boolean)],
    );
    const storedById = new Map(stored.map((r) => [r.id, r]));
    const webhookIdOf = new Map<string, string>();
    let rejected = 0;
    for (const e of this.endpoints) {
      rejected += e.receiver.rejectedSignatures;
      for (const r of e.receiver.received) {
        const type = (r.verified as { type?: string }).type;
        const data = dataOf(r);
        const row = data ? storedById.get(data.id) : undefined;
        book.check(
          CHECK_WEBHOOK.decided,
          row !== undefined &&
            row.game_id === e.gameId &&
            data!.gameId === e.gameId &&
            type === `decision.${row.status}` &&
            data!.status === row.status &&
            data!.eventId === row.event_id,
          () => `${r.id}: ${r.body.slice(0, 200)}`,
        );
        if (!data) continue;
        const first = webhookIdOf.get(data.id) ?? r.id;
        book.check(CHECK_WEBHOOK.sameId, first === r.id, () => `decision ${data.id}: webhook-id ${first} and ${r.id}`);
        webhookIdOf.set(data.id, first);
      }
    }
    if (options.once) {
      // Exactly once: no message (webhook-id) received twice (the upgrade, where no receiver fails).
      const times = new Map<string, number>();
      for (const r of this.received()) times.set(r.id, (times.get(r.id) ?? 0) + 1);
      for (const [id, n] of times) book.check(options.once, n === 1, () => `${id} received ${n} times`);
    }
    book.check(CHECK_WEBHOOK.signatures, rejected === 0, () => `${rejected} requests refused: bad signature`);
    const { rows: attempts } = await client.query<{ messages: number; attempts: number; pending: number }>(
      `select count(*)::int as messages, coalesce(sum(attempts), 0)::int as attempts,
              count(*) filter (where state = 'pending')::int as pending
         from ledger.webhook_messages where endpoint_id = any($1::uuid[])`,
      [this.endpoints.map((e) => e.id)],
    );
    const a = attempts[0]!;
    const duplicates = this.received().length - webhookIdOf.size;
    return (
      `${decisions.length} decisions, ${a.messages} messages, ${a.attempts} attempts, ` +
      `${this.received().length} requests received (${duplicates} duplicates), ${a.pending} pending at the end; ` +
      (this.backAt > 0
        ? `every message arrived ${((drainedAt - this.backAt) / 1000).toFixed(1)} s after the receivers were back `
        : 'every message arrived ') +
      `(${((drainedAt - settleStarted) / 1000).toFixed(1)} s of waiting after the load)`
    );
  }

  /** The endpoints deleted (the later phases make no messages) and the receivers closed. */
  async cleanUp(): Promise<void> {
    for (const e of this.endpoints) {
      await consoleCall(this.gateway, this.developerToken, {
        type: 'deleteWebhookEndpoint',
        webhookEndpointId: e.id,
      }).catch(() => {});
      await e.receiver.stop();
    }
    this.endpoints = [];
  }
}

function dataOf(r: ReceivedWebhook): DecisionData | undefined {
  const data = (r.verified as { data?: DecisionData }).data;
  return data && typeof data.id === 'string' ? data : undefined;
}
