// JSON Schema 2020-12 fragments of the API document's values, built from the vocabulary (vocabulary.ts) and the UUID
// rule (../validation/uuid.ts). The edges validate requests with them, the response shapes are made of them, and the
// OpenAPI document publishes the very same objects, so that the published rules are the server's.
import { UUID_PATTERN } from '../validation/uuid.ts';
import {
  CREDITS_MAX,
  DECISION_REASONS,
  EVENT_STATUSES,
  EVENT_TYPE_LENGTH_MAX,
  EVENT_TYPE_PATTERN,
  GAME_STATUSES,
  MEMBER_ROLES,
  PLATFORMS,
} from './vocabulary.ts';

/** UUIDs: `format: uuid` for generic tools and the spec's exact rule as `pattern`. */
export const uuidSchema = { type: 'string', format: 'uuid', pattern: UUID_PATTERN } as const;
export const dateTimeSchema = { type: 'string', format: 'date-time' } as const;
/** Credit amounts: integers 0 to 1e12. */
export const creditsSchema = { type: 'integer', minimum: 0, maximum: CREDITS_MAX } as const;
/** Allocation, funding and reward amounts: greater than 0. */
export const positiveCreditsSchema = { type: 'integer', minimum: 1, maximum: CREDITS_MAX } as const;
export const eventTypeSchema = {
  type: 'string',
  minLength: 1,
  maxLength: EVENT_TYPE_LENGTH_MAX,
  pattern: EVENT_TYPE_PATTERN,
} as const;
export const platformSchema = { enum: [...PLATFORMS] } as const;
export const gameStatusSchema = { enum: [...GAME_STATUSES] } as const;
export const memberRoleSchema = { enum: [...MEMBER_ROLES] } as const;
export const eventStatusSchema = { enum: [...EVENT_STATUSES] } as const;
export const eventReasonSchema = { enum: [...DECISION_REASONS] } as const;
