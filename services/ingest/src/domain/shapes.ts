/**
 * Response shapes of the ingest endpoints as JSON Schema 2020-12 (usable as-is in the OpenAPI 3.1 document):
 * GameEventResult and GamePublicConfig of the spec, strict (no extra fields), every field required.
 */
import { DECISION_REASONS } from '../../../runtime/src/contracts/vocabulary.ts';
import { UUID_PATTERN } from '../../../runtime/src/validation/uuid.ts';
import { EVENT_TYPE_PATTERN } from './event-input.ts';

const uuid = { type: 'string', format: 'uuid', pattern: UUID_PATTERN } as const;
const credits = { type: 'integer', minimum: 0, maximum: 1_000_000_000_000 } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

export const gameEventResultSchema = {
  title: 'GameEventResult',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'eventId',
    'gameId',
    'organizationId',
    'playerId',
    'eventType',
    'occurredAt',
    'status',
    'reason',
    'rewardCredits',
    'createdAt',
    'replayed',
    'mode',
  ],
  properties: {
    id: uuid,
    eventId: uuid,
    gameId: uuid,
    organizationId: uuid,
    playerId: uuid,
    eventType: { type: 'string', maxLength: 64, pattern: EVENT_TYPE_PATTERN },
    occurredAt: dateTime,
    status: { enum: ['accepted', 'rejected'] },
    reason: { enum: [...DECISION_REASONS, null] },
    rewardCredits: credits,
    createdAt: dateTime,
    replayed: { type: 'boolean' },
    mode: { const: 'sandbox' },
  },
} as const;

export const gamePublicConfigSchema = {
  title: 'GamePublicConfig',
  type: 'object',
  additionalProperties: false,
  required: [
    'gameId',
    'name',
    'slug',
    'environment',
    'productionRewardsEnabled',
    'platform',
    'status',
    'rules',
    'thresholds',
  ],
  properties: {
    gameId: uuid,
    name: { type: 'string' },
    slug: uuid,
    environment: { const: 'sandbox' },
    productionRewardsEnabled: { const: false },
    platform: { enum: ['android', 'ios', 'other', 'unity', 'unreal', 'web'] },
    status: { enum: ['active', 'paused'] },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['eventType', 'rewardCredits'],
        properties: {
          eventType: { type: 'string', maxLength: 64, pattern: EVENT_TYPE_PATTERN },
          rewardCredits: { ...credits, minimum: 1 },
        },
      },
    },
    thresholds: {
      type: 'object',
      additionalProperties: false,
      required: ['maxPayoutCredits', 'dailyPlayerCapCredits'],
      properties: { maxPayoutCredits: credits, dailyPlayerCapCredits: credits },
    },
  },
} as const;
