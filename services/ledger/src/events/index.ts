// The ledger's event side: RecordEvent (the hot path), AuthenticateGameKey (the event edge's error paths) and
// GetPublicConfig. Registered by program.ts.

export { EVENT_BATCH_MAX_DEFAULT, EVENT_GROUP_KEYS_MAX_DEFAULT } from './batcher.ts';
export { eventEndpoints } from './endpoints.ts';
