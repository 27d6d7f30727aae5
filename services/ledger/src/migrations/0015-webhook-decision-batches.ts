// The decisions' webhook outbox, one row per call (the outbox's cost on the event path). Until now
// ledger.record_events wrote one ledger.webhook_messages row per fresh decision and subscribed endpoint: a heap row,
// three index entries and two foreign-key checks per decision, which cost the event path 13-15 % of bench:ledger's
// rate with one endpoint per game (docs/benchmarks.md, "The webhook outbox on the event path"). Now a call writes
// one webhook_decision_batches row: the (endpoint, decision) pairs its fresh decisions make messages of, as two
// parallel arrays, in the decisions' transaction (so still nothing reported that did not commit and nothing committed
// left unreported). The delivery worker turns each row into its webhook_messages rows and deletes it, in one
// statement (services/ledger/src/webhooks/repository.ts, expandDecisionBatches), before it claims: a message gets its
// id (the webhook-id of every attempt) there, once.
//
//   - id: a sequence (the worker takes the oldest first; no random key's index insert on the event path).
//   - created_at: the call's time, which becomes its messages' created_at (the body's `timestamp`).
//   - endpoint_ids[i], decision_ids[i]: one message to make. No foreign keys (arrays cannot have them); the
//     expansion inserts the messages with theirs (an endpoint deleted meanwhile takes its pairs with it, as its
//     messages would have gone with it).
//   - toast_tuple_target 8160: a call's row stays in the table's page up to about 250 pairs (not moved to the TOAST
//     table, which would write a second heap row and index entry); larger calls are stored out of line as usual.
// game.budget_low and game.budget_exhausted stay webhook_messages rows written by the call (at most one per game per
// call, and rare).
import { Migration } from '@mikro-orm/migrations';

export class LedgerWebhookDecisionBatches extends Migration {
  override name = '0015-webhook-decision-batches';

  override up(): void {
    this.addSql(`create table ledger.webhook_decision_batches (
      id bigint generated always as identity primary key,
      created_at timestamptz not null,
      endpoint_ids uuid[] not null,
      decision_ids uuid[] not null,
      constraint webhook_decision_batch_pairs check (
        cardinality(endpoint_ids) between 1 and 100000 and cardinality(decision_ids) = cardinality(endpoint_ids)
        and array_ndims(endpoint_ids) = 1 and array_ndims(decision_ids) = 1
        and array_position(endpoint_ids, null) is null and array_position(decision_ids, null) is null)
    ) with (toast_tuple_target = 8160)`);
  }
}
