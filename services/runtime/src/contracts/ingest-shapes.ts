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
import { EVENT_RECORD_FIELDS, type EventRecordField } from './event-record.ts';
import { OCCURRED_AT_PATTERN } from './occurred-at.ts';

/** The event record's members (eventRecordJson's, every one and no other: the compiler holds them to it). */
const eventRecordProperties = {
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
} as const satisfies Record<EventRecordField, unknown>;

const gameEventResultProperties = {
  ...eventRecordProperties,
  replayed: { type: 'boolean' },
  mode: { const: 'sandbox' },
} as const;

export const gameEventResultSchema = {
  title: 'GameEventResult',
  type: 'object',
  additionalProperties: false,
  required: [...EVENT_RECORD_FIELDS, 'replayed', 'mode'],
  properties: gameEventResultProperties,
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

/**
 * JSON Schema 2020-12 of the request body, the ingest edge validates with it (services/ingest/src/domain/event-input.ts), /openapi.json describes it. UUIDs carry
 * both `format: uuid` and the spec's exact `pattern`, so external validators see the same rule.
 * `occurredAt` carries the whole grammar as a `pattern` (standard `date-time` requires seconds, the
 * spec does not), calendar validity and range included: exactly what parseOccurredAt accepts.
 */
export const gameEventInputSchema = {
  title: 'GameEventInput',
  type: 'object',
  additionalProperties: false,
  required: ['eventId', 'playerId', 'eventType', 'occurredAt'],
  properties: {
    eventId: { ...uuid, description: 'Idempotency id.' },
    playerId: uuid,
    eventType: eventTypeSchema,
    occurredAt: {
      type: 'string',
      pattern: OCCURRED_AT_PATTERN,
      description:
        'YYYY-MM-DDTHH:MM[:SS[.fraction]] followed by Z, +hh:mm or -hh:mm; calendar-valid; within 5 minutes of receipt.',
    },
    metadata: {
      type: 'object',
      // An open object: its keys are the caller's data. Limits are checked after the schema (metadata.ts).
      additionalProperties: true,
      description:
        'Canonical (RFC 8785) UTF-8 size at most 4096 bytes, depth at most 6, at most 100 items per array and ' +
        '100 entries per object, no NUL, no unpaired surrogate, finite numbers. Part of the replay identity.',
    },
  },
} as const;
