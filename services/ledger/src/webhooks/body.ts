// A message's body as the receiver gets it (CONTRACT section 11.1): `{"type", "timestamp", "data"}`, `timestamp` the
// message's creation, `data` of a decision its GameEventResult without `replayed`. Rendered from stored, immutable
// fields, so every attempt sends the same bytes.
import { eventRecordJson } from '#runtime/contracts/event-record.ts';
import type { DecisionRow } from '../db/decision-rows.ts';

export function messageBody(message: {
  eventType: string;
  createdAt: string;
  data: string | undefined;
  decision: DecisionRow | undefined;
}): string {
  const data = message.decision
    ? { ...eventRecordJson(message.decision), gameTime: message.decision.gameTime, mode: 'sandbox' }
    : (JSON.parse(message.data ?? '{}') as unknown);
  return JSON.stringify({ type: message.eventType, timestamp: message.createdAt, data });
}
