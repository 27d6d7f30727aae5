/**
 * Response shapes of the ingest endpoints as JSON Schema 2020-12 (usable as-is in the OpenAPI 3.1 document):
 * GameEventResult and GamePublicConfig of the spec, strict (no extra fields), every field required.
 */
import {
  creditsSchema as credits,
  dateTimeSchema as dateTime,
  eventStatusSchema,
  eventTypeSchema,
  gameStatusSchema,
  platformSchema,
  positiveCreditsSchema,
  uuidSchema as uuid,
} from '#runtime/contracts/json-schema.ts';
import { DECISION_REASONS } from '#runtime/contracts/vocabulary.ts';

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
    eventType: eventTypeSchema,
    occurredAt: dateTime,
    status: eventStatusSchema,
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
    platform: platformSchema,
    status: gameStatusSchema,
    rules: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['eventType', 'rewardCredits'],
        properties: {
          eventType: eventTypeSchema,
          rewardCredits: positiveCreditsSchema,
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
