// The event record of the API document (DeveloperEvent: the records API, the console snapshot, GraphQL, the live
// decisions subscription, and the game SDK's GameEventResult, which adds `replayed` and `mode`) from the ledger's
// DeveloperEvent message: the one mapping of a stored decision to JSON.
import type { DeveloperEvent } from './gen/rewards/v1/console_pb.ts';

export function eventRecordJson(e: DeveloperEvent) {
  return {
    id: e.id,
    eventId: e.eventId,
    gameId: e.gameId,
    organizationId: e.organizationId,
    playerId: e.playerId,
    eventType: e.eventType,
    occurredAt: e.occurredAt,
    status: e.status,
    reason: e.reason ?? null,
    // Credits fit in a JSON number: at most 1e12 (vocabulary.ts).
    rewardCredits: Number(e.rewardCredits),
    createdAt: e.createdAt,
  };
}
