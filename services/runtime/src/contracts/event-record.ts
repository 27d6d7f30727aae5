// The event record of the API document (DeveloperEvent: the records API, the console snapshot, GraphQL, the live
// decisions subscription, the decision export, webhooks' decision messages, and the game SDK's GameEventResult, which
// adds `replayed` and `mode`) from the ledger's DeveloperEvent message or a decision the ledger read: the one mapping
// of a stored decision to JSON. Its keys, in order, are EVENT_RECORD_FIELDS, which the other spellings of the record
// derive from (the ingest response's schema, the export's columns, the edge's JSON writer, the shape tests).
import { create } from '@bufbuild/protobuf';
import { type DeveloperEvent, DeveloperEventSchema } from './gen/rewards/v1/console_pb.ts';

/** What the record is made from: DeveloperEvent's fields (the message itself, or a decision row of the same fields). */
export type EventRecordSource = Omit<DeveloperEvent, '$typeName' | '$unknown' | 'gameTime'>;

export function eventRecordJson(e: EventRecordSource) {
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

export type EventRecordJson = ReturnType<typeof eventRecordJson>;
export type EventRecordField = keyof EventRecordJson;

/** The event record's keys, in the order eventRecordJson writes them (DeveloperEvent's field numbers 1 to 11). */
export const EVENT_RECORD_FIELDS = Object.keys(
  eventRecordJson(create(DeveloperEventSchema)),
) as readonly EventRecordField[];
