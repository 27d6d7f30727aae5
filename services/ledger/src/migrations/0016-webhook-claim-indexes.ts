// What the fair claim reads (webhooks/repository.ts claim), built concurrently:
//   - webhook_messages_in_flight: an endpoint's messages under a lease, counted for every endpoint a claim looks at
//     (the in-flight bound); without it the count reads the endpoint's whole backlog of due messages.
//   - webhook_messages_tests_due: an endpoint's due webhook.test messages, claimed before its backlog.
import { type ConcurrentIndex, ConcurrentIndexMigration } from '#runtime/db/migrations.ts';

export class LedgerWebhookClaimIndexes extends ConcurrentIndexMigration {
  override name = '0016-webhook-claim-indexes';
  protected override readonly builds: ConcurrentIndex[] = [
    {
      schema: 'ledger',
      name: 'webhook_messages_in_flight',
      definition: `on ledger.webhook_messages (endpoint_id, in_flight_until)
        where state = 'pending' and in_flight_until is not null`,
    },
    {
      schema: 'ledger',
      name: 'webhook_messages_tests_due',
      definition: `on ledger.webhook_messages (endpoint_id, next_attempt_at)
        where state = 'pending' and event_type = 'webhook.test'`,
    },
  ];
}
