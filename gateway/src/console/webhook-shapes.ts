// The webhook reads' JSON shapes (GraphQL webhookEndpoints, webhookDeliveries) from the ledger's messages: optional
// fields become null.
import type { ListWebhookDeliveriesResponse } from '#runtime/contracts/gen/rewards/v1/console_pb.ts';
import type { WebhookEndpoint } from '#runtime/contracts/gen/rewards/v1/webhooks_pb.ts';

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export const webhookEndpointJson = (e: WebhookEndpoint) => ({
  id: e.id,
  gameId: e.gameId,
  organizationId: e.organizationId,
  url: e.url,
  eventTypes: e.eventTypes,
  enabled: e.enabled,
  disabledReason: orNull(e.disabledReason),
  failingSince: orNull(e.failingSince),
  createdAt: e.createdAt,
  previousSecretExpiresAt: orNull(e.previousSecretExpiresAt),
});

export const webhookDeliveryPageJson = (reply: ListWebhookDeliveriesResponse) => ({
  deliveries: reply.deliveries.map((d) => ({
    id: d.id,
    webhookEndpointId: d.webhookEndpointId,
    eventType: d.eventType,
    state: d.state,
    createdAt: d.createdAt,
    nextAttemptAt: orNull(d.nextAttemptAt),
    finishedAt: orNull(d.finishedAt),
    payload: d.payload,
    attempts: d.attempts.map((a) => ({
      attempt: a.attempt,
      startedAt: a.startedAt,
      latencyMs: a.latencyMs,
      statusCode: orNull(a.statusCode),
      error: orNull(a.error),
      responseExcerpt: a.responseExcerpt,
    })),
  })),
  nextCursor: orNull(reply.nextCursor),
});
