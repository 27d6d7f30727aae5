// A message's body as the receiver gets it (CONTRACT section 11.1): `{"type", "timestamp", "data"}`, `timestamp` the
// message's creation, `data` of a decision its GameEventResult without `replayed`. Rendered from stored, immutable
// fields, so every attempt sends the same bytes.
import type { DecisionFields } from './repository.ts';

export function messageBody(message: {
  eventType: string;
  createdAt: string;
  data: string | undefined;
  decision: DecisionFields | undefined;
}): string {
  const data = message.decision
    ? {
        id: message.decision.id,
        eventId: message.decision.eventId,
        gameId: message.decision.gameId,
        organizationId: message.decision.organizationId,
        playerId: message.decision.playerId,
        eventType: message.decision.eventType,
        occurredAt: message.decision.occurredAt,
        status: message.decision.status,
        reason: message.decision.reason ?? null,
        rewardCredits: message.decision.rewardCredits,
        createdAt: message.decision.createdAt,
        gameTime: message.decision.gameTime,
        mode: 'sandbox',
      }
    : (JSON.parse(message.data ?? '{}') as unknown);
  return JSON.stringify({ type: message.eventType, timestamp: message.createdAt, data });
}
