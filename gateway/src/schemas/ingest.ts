// The game SDK's ingest endpoints in /openapi.json: POST /api/game-sdk/v2/events, POST /api/game-sdk/v2/events/batch
// (CONTRACT section 11.1) and GET /api/game-sdk/v2/config.
// The schemas are the ones ingest validates requests with (GameEventInput) and its tests validate responses with.

import {
  gameEventInputSchema,
  gameEventResultSchema,
  gamePublicConfigSchema,
} from '#runtime/contracts/ingest-shapes.ts';
import type { OpenApiFragment } from '../openapi.ts';
import { dataEnvelope, strictObject } from './common.ts';
import { type JsonSchema, ref } from './json-schema.ts';

/** One event's result in a batch: the single endpoint's answer to that event alone, its status beside it. Both
 * variants and the error object are named schemas, so that client generators give each its own model. */
const gameEventBatchResult: JsonSchema = {
  description:
    "One event's result, in input order: GameEventBatchDecision (status 200) or GameEventBatchFailure (status 4xx or 503).",
  oneOf: [ref('GameEventBatchDecision'), ref('GameEventBatchFailure')],
};

const gameEventBatchDecision: JsonSchema = {
  description:
    'The event was decided (accepted or rejected, or a replay of the stored decision): the 200 body of the single endpoint.',
  ...strictObject({ status: { const: 200 }, data: ref('GameEventResult') }),
};

const gameEventBatchFailure: JsonSchema = {
  description:
    'No decision for this event in this answer: the status and error the single endpoint would have answered for it alone. 4xx: final for this payload, nothing stored. 503: the message says whether nothing was stored or the outcome is unknown; either way resend the same event (same eventId, same bytes), which answers the stored decision if one was made.',
  ...strictObject({ status: { type: 'integer', enum: [400, 404, 409, 413, 503] }, error: ref('ApiError') }),
};

export const ingestSchemas: Record<string, JsonSchema> = {
  GameEventInput: gameEventInputSchema as unknown as JsonSchema,
  GameEventResult: gameEventResultSchema as unknown as JsonSchema,
  GameEventBatchInput: strictObject({
    events: { type: 'array', minItems: 1, maxItems: 100, items: { $ref: '#/components/schemas/GameEventInput' } },
  }),
  GameEventBatchResult: gameEventBatchResult,
  GameEventBatchDecision: gameEventBatchDecision,
  GameEventBatchFailure: gameEventBatchFailure,
  GameEventBatchResults: strictObject({
    results: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { $ref: '#/components/schemas/GameEventBatchResult' },
    },
  }),
  GamePublicConfig: gamePublicConfigSchema as unknown as JsonSchema,
};

function errors(codes: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(codes)) {
    out[status] = { $ref: `#/components/responses/Error${status}`, description };
  }
  return out;
}

/** The quota fields of a fresh decision (CONTRACT section 11; services/ingest/src/routes/events.ts). */
const quotaHeaders = {
  'RateLimit-Policy': {
    description:
      "The game's per-minute limit of fresh attempts (IETF httpapi rate-limit fields): q attempts per w = 60 s.",
    schema: { type: 'string', pattern: '^"minute";q=[0-9]+;w=60$' },
  },
  RateLimit: {
    description:
      'r: fresh attempts of the game left in this UTC minute (rejected ones count too); t: seconds until the minute ends.',
    schema: { type: 'string', pattern: '^"minute";r=[0-9]+;t=([1-9]|[1-5][0-9]|60)$' },
  },
  'Rewards-Daily-Remaining': {
    description: 'Credits this player may still be awarded in this game today (UTC), after this decision.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Rewards-Budget-Remaining': {
    description: "Credits left in the game's budget after this decision.",
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

export const ingestOpenApi: OpenApiFragment = {
  schemas: ingestSchemas,
  paths: {
    '/api/game-sdk/v2/events': {
      post: {
        operationId: 'recordGameEvent',
        summary:
          'Records one server-verified event and answers its immutable decision (accepted or rejected, HTTP 200 ' +
          'either way); the same eventId and payload answers the stored decision with replayed: true.',
        tags: ['game-sdk'],
        security: [{ gameSecretKey: [] }],
        requestBody: {
          required: true,
          description: 'One event; unknown fields rejected; at most 16,384 bytes.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/GameEventInput' } } },
        },
        responses: {
          '200': {
            description:
              'The decision. Inspect data.status and data.reason: 200 does not imply a reward. A fresh decision ' +
              '(replayed: false) carries the quota headers, figures after this decision from its own transaction; a ' +
              'replay carries none.',
            headers: quotaHeaders,
            content: { 'application/json': { schema: dataEnvelope('GameEventResult') } },
          },
          ...errors({
            '400':
              'INVALID_REQUEST (not JSON), invalid_event (schema, unknown field, occurredAt grammar), invalid_metadata.',
            '401': 'invalid_key: missing or malformed bearer, unknown or revoked key.',
            '403': 'secret_key_required: a public key.',
            '404': "invalid_player: playerId is not a player of the key's game.",
            '409': 'event_conflict: the eventId was used with another payload.',
            '413': 'PAYLOAD_TOO_LARGE: body over 16,384 bytes.',
            '415': 'INVALID_CONTENT_TYPE: Content-Type is not application/json.',
            '503':
              'PLATFORM_DISABLED; retry_later (a dependency is down; the message says whether nothing was stored or the outcome is unknown: retry with the same eventId).',
          }),
        },
      },
    },
    '/api/game-sdk/v2/events/batch': {
      post: {
        operationId: 'recordGameEvents',
        summary:
          'Records 1 to 100 events in one request: one result per event, in input order, each the status and body ' +
          'the single endpoint would have answered that event alone (HTTP 200 for the request as a whole).',
        tags: ['game-sdk'],
        security: [{ gameSecretKey: [] }],
        requestBody: {
          required: true,
          description:
            "At most 1,048,576 bytes; each event keeps the single endpoint's limits (16,384 bytes as a body of its " +
            'own, metadata included). Copies of one eventId in a batch are two copies of one event.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/GameEventBatchInput' } } },
        },
        responses: {
          '200': {
            description:
              "The results: {status: 200, data: GameEventResult} or {status, error} with the single endpoint's " +
              'status and code for that event (400 invalid_event or invalid_metadata, 404 invalid_player, 409 ' +
              'event_conflict, 413 PAYLOAD_TOO_LARGE, 503 retry_later). The quota headers are those of the last ' +
              'fresh decision of the batch (none when it has none).',
            headers: quotaHeaders,
            content: { 'application/json': { schema: dataEnvelope('GameEventBatchResults') } },
          },
          ...errors({
            '400':
              'INVALID_REQUEST (not JSON); invalid_event (events missing, not an array, empty, over 100, or an unknown top-level field).',
            '401': 'invalid_key: missing or malformed bearer, unknown or revoked key.',
            '403': 'secret_key_required: a public key.',
            '413': 'PAYLOAD_TOO_LARGE: body over 1,048,576 bytes.',
            '415': 'INVALID_CONTENT_TYPE: Content-Type is not application/json.',
            '503':
              'PLATFORM_DISABLED; retry_later only when every event met a 503 (nothing of the batch was decided; the message says whether nothing was stored or the outcome is unknown).',
          }),
        },
      },
    },
    '/api/game-sdk/v2/config': {
      get: {
        operationId: 'getGamePublicConfig',
        summary: "The public configuration of the key's game: active rules only, thresholds.",
        tags: ['game-sdk'],
        security: [{ gamePublicKey: [] }],
        parameters: [
          {
            name: 'publicKey',
            in: 'query',
            required: true,
            description:
              'Exactly one; cr_pk_sandbox_ followed by 43 base64url characters. Other parameters are ignored.',
            schema: { type: 'string', pattern: '^cr_pk_sandbox_[A-Za-z0-9_-]{43}$' },
          },
        ],
        responses: {
          '200': {
            description: 'The configuration.',
            content: { 'application/json': { schema: dataEnvelope('GamePublicConfig') } },
          },
          ...errors({
            '401': 'INVALID_PUBLIC_KEY: missing, repeated, malformed, unknown, revoked or secret publicKey.',
            '503': 'PLATFORM_DISABLED; retry_later (the ledger is unreachable).',
          }),
        },
      },
    },
  },
};
