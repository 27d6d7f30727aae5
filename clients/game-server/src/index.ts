// @sandbox-rewards/game-server: a game server's client of the Sandbox Rewards event endpoints (README.md).
export {
  ClientClosedError,
  EVENTS_BATCH_PATH,
  EVENTS_PATH,
  type EventOutcome,
  type FetchLike,
  type FetchResponseLike,
  type GameEventResult,
  GameServerClient,
  type GameServerClientOptions,
  type HoldNotice,
  type RecordedEvent,
  type RetryNotice,
} from './client.ts';
export {
  BATCH_BODY_BYTES_MAX,
  BATCH_EVENTS_MAX,
  EVENT_BODY_BYTES_MAX,
  type GameEventInput,
  InvalidEventError,
  parseSerializedEvent,
  type SerializedEvent,
  serializeEvent,
} from './event.ts';
export { type HeaderReader, parseQuota, type Quota, retryAfterMs } from './quota.ts';
