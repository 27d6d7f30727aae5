// A game's Webhooks tab keeps the delivery filters of one endpoint in its address
// (#/game/<id>/webhooks?endpoint=…&webhook-id=…&state=…&type=…&from=…&to=…), as the Activity page keeps its own
// (hash-query.ts): a reload or a pasted link shows the same filtered deliveries, and Back and Forward move between
// filters. Read by the router before the game page's code is loaded. Pure: no React, no request.
import { hashQuery, hashWith, instantParam } from '../../hash-query.ts';
import { SAMPLE_DATA } from './webhook-samples.ts';

/** What the deliveries view is narrowed to (GraphQL WebhookDeliveryFilter); absent fields do not narrow. */
export interface WebhookDeliveryFilter {
  state?: 'pending' | 'delivered' | 'failed';
  eventType?: string;
  /** RFC 3339 instants (UTC), createdAt in [from, to). */
  from?: string;
  to?: string;
  webhookId?: string;
}

/** A delivery's states (GraphQL WebhookDelivery.state). */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
/** A delivery's types: every endpoint event type, and webhook.test (the sample payloads have one each). */
export const DELIVERY_TYPES = Object.keys(SAMPLE_DATA);
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The endpoint whose deliveries the address filters, and its filters (none: every endpoint's deliveries, all). */
export interface DeliveriesFilter {
  endpointId?: string;
  filter: WebhookDeliveryFilter;
}

/**
 * The filters of the address's query. A value the form could not have written (a state or type not offered, a
 * malformed webhook-id or instant, no endpoint) is left out rather than sent.
 */
export function deliveriesFilterOf(hash: string): DeliveriesFilter {
  const query = hashQuery(hash);
  const endpointId = query.get('endpoint') ?? '';
  if (!UUID.test(endpointId)) return { filter: {} };
  const filter: WebhookDeliveryFilter = {};
  const webhookId = query.get('webhook-id')?.trim() ?? '';
  const state = query.get('state') ?? '';
  const type = query.get('type') ?? '';
  const from = instantParam(query, 'from');
  const to = instantParam(query, 'to');
  if (UUID.test(webhookId)) filter.webhookId = webhookId.toLowerCase();
  if ((DELIVERY_STATES as readonly string[]).includes(state)) filter.state = state as WebhookDeliveryFilter['state'];
  if (DELIVERY_TYPES.includes(type)) filter.eventType = type;
  if (from) filter.from = from;
  if (to && !(from && to <= from)) filter.to = to;
  return { endpointId: endpointId.toLowerCase(), filter };
}

/** The Webhooks tab's address with an endpoint's delivery filters (none: the tab's own address). */
export function deliveriesAddress(gameId: string, endpointId: string, filter: WebhookDeliveryFilter): string {
  const path = `#/game/${gameId}/webhooks`;
  if (Object.values(filter).every((value) => !value)) return path;
  return hashWith(path, [
    ['endpoint', endpointId],
    ['webhook-id', filter.webhookId],
    ['state', filter.state],
    ['type', filter.eventType],
    ['from', filter.from],
    ['to', filter.to],
  ]);
}
