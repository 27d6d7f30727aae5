// Webhooks (CONTRACT section 11.1): a game's endpoints, the transactional outbox of messages to them and
// every attempt to deliver one. A message is written in the transaction of what it reports (ledger.record_events for
// decisions and budget notices, the console action for a game paused or resumed, sendTestWebhook), so nothing is
// reported that did not commit and nothing committed is left unreported; the ledger's delivery worker sends it
// (services/ledger/src/webhooks/worker.ts, docs/webhooks.md).
//
//   - webhook_endpoints: url, event types, the signing secret encrypted (AES-256-GCM, docs/decisions.md "Webhook
//     secrets"), enabled or disabled (by a developer, or by the worker after failing for a long while).
//     webhook_endpoints_by_game (partial: enabled ones) is the one lookup the event path adds.
//   - webhook_messages: one per (endpoint, thing reported); its id is the `webhook-id` of every attempt. Two foreign
//     keys only (each one check per message on the event path): (endpoint, game) to its endpoint, which also keeps
//     its game the endpoint's, and (decision, game) to the decision it reports. A decision's
//     message references the immutable decision row (its body is rendered from it, the same bytes on every attempt);
//     any other carries its data. `pending` until a 2xx (`delivered`) or until its retries are over (`failed`).
//     in_flight_until: claimed by a worker until then (the lease that keeps replicas from sending it twice at once).
//   - webhook_attempts: one per attempt: status code or error, latency, a bounded excerpt of the response.
//   - settings.webhook_secret_key: the key secrets are encrypted with when WEBHOOK_SECRET_KEY is not set (the
//     development default; a deployment sets the variable, docs/decisions.md).
//   - webhook_budget_notices: the budget amounts a game's game.budget_exhausted was reported at (once per amount; an
//     allocation re-arms it).
//
// Lock order: games first (the constraint), as the event path (record_events takes games, then events).
import { Migration } from '@mikro-orm/migrations';

const EVENT_TYPES = `array['decision.accepted', 'decision.rejected', 'game.budget_low', 'game.budget_exhausted',
  'game.paused', 'game.resumed']::text[]`;

export class LedgerWebhooks extends Migration {
  override name = '0014-webhooks';
  /** squawk rules this migration breaks, with the reason (.ci/lint-migrations.ts). */
  static readonly lintExceptions = {
    'prefer-bigint-over-int':
      'bounded counts and measures (attempt numbers, latency in ms, HTTP status codes), never near 2^31',
  };

  override up(): void {
    // The unique index was built concurrently by 0014-games-organization-index: attaching it is a catalogue change.
    this.addSql(`alter table ledger.games add constraint games_organization unique using index games_organization`);
    this.addSql(`create table ledger.webhook_endpoints (
      id uuid primary key,
      game_id uuid not null,
      organization_id uuid not null references ledger.organizations (id),
      url text not null check (length(url) between 8 and 2048 and url ~ '^https?://[^\\s]+$'),
      event_types text[] not null check (cardinality(event_types) between 1 and 6 and event_types <@ ${EVENT_TYPES}
        and array_position(event_types, null) is null),
      secret_ciphertext bytea not null check (length(secret_ciphertext) = 60),
      enabled boolean not null default true,
      disabled_reason text check (disabled_reason in ('developer', 'failing')),
      failing_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint webhook_endpoints_game foreign key (game_id, organization_id)
        references ledger.games (id, organization_id),
      constraint webhook_endpoint_disabled_reason check (enabled = (disabled_reason is null)),
      constraint webhook_endpoints_scope unique (id, game_id)
    )`);
    this.addSql(`create index webhook_endpoints_by_game on ledger.webhook_endpoints (game_id) where enabled`);
    this.addSql(`create index webhook_endpoints_by_organization on ledger.webhook_endpoints (organization_id)`);

    this.addSql(`create table ledger.webhook_messages (
      id uuid primary key,
      endpoint_id uuid not null,
      game_id uuid not null,
      event_type text not null check (event_type = any (${EVENT_TYPES} || 'webhook.test'::text)),
      decision_id uuid,
      data jsonb check (data is null or jsonb_typeof(data) = 'object'),
      created_at timestamptz not null default now(),
      -- When its retries began: its creation, or the last redeliver (retries end 25 hours after it).
      retry_started_at timestamptz not null default now(),
      state text not null default 'pending' check (state in ('pending', 'delivered', 'failed')),
      attempts integer not null default 0 check (attempts >= 0),
      next_attempt_at timestamptz,
      in_flight_until timestamptz,
      finished_at timestamptz,
      constraint webhook_message_endpoint foreign key (endpoint_id, game_id)
        references ledger.webhook_endpoints (id, game_id) on delete cascade,
      constraint webhook_message_decision foreign key (decision_id, game_id) references ledger.events (id, game_id),
      constraint webhook_message_payload check (
        (left(event_type, 9) = 'decision.') = (decision_id is not null) and (decision_id is null) = (data is not null)),
      constraint webhook_message_schedule check ((state = 'pending') = (next_attempt_at is not null)
        and (state = 'pending') = (finished_at is null)
        and (state = 'pending' or in_flight_until is null))
    )`);
    this.addSql(`create index webhook_messages_by_endpoint
      on ledger.webhook_messages (endpoint_id, created_at desc, id desc)`);
    this.addSql(`create index webhook_messages_due on ledger.webhook_messages (endpoint_id, next_attempt_at)
      where state = 'pending'`);
    // The retention clean-up's order (finished messages past their horizon); never written by the event path.
    this.addSql(`create index webhook_messages_finished on ledger.webhook_messages (finished_at)
      where state <> 'pending'`);

    this.addSql(`create table ledger.webhook_attempts (
      message_id uuid not null references ledger.webhook_messages (id) on delete cascade,
      attempt integer not null check (attempt >= 1),
      started_at timestamptz not null,
      latency_ms integer not null check (latency_ms >= 0),
      status_code integer check (status_code between 100 and 599),
      error text check (length(error) between 1 and 500),
      response_excerpt text not null default '' check (length(response_excerpt) <= 1024),
      primary key (message_id, attempt),
      constraint webhook_attempt_outcome check ((status_code is null) <> (error is null))
    )`);

    this.addSql(`alter table ledger.settings add column webhook_secret_key bytea
      check (length(webhook_secret_key) = 32)`);
    this.addSql(`create table ledger.webhook_budget_notices (
      game_id uuid not null references ledger.games (id),
      budget_credits bigint not null check (budget_credits >= 0),
      created_at timestamptz not null default now(),
      primary key (game_id, budget_credits)
    )`);
  }
}
