// Schema pieces shared by the API's shapes (spec: General rules, Limits).
import { DECISION_REASONS } from '../../../services/runtime/src/contracts/vocabulary.ts';
import { type JsonSchema, ref } from './json-schema.ts';

export const CREDITS_MAX = 1_000_000_000_000;

export const uuid: JsonSchema = { type: 'string', format: 'uuid' };
export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
/** Credit amounts: integers 0 to 1e12. */
export const credits: JsonSchema = { type: 'integer', minimum: 0, maximum: CREDITS_MAX };
/** Allocation, funding and reward amounts: greater than 0. */
export const positiveCredits: JsonSchema = { type: 'integer', minimum: 1, maximum: CREDITS_MAX };
/** Names of organizations, projects, games and keys: 1 to 100 characters, no control characters. */
export const name: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
};
export const eventType: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z][a-z0-9_.-]{0,63}$',
};
export const externalPlayerId: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
};
export const mode: JsonSchema = { const: 'sandbox' };
export const role: JsonSchema = { enum: ['admin', 'owner', 'viewer'] };
export const platform: JsonSchema = { enum: ['android', 'ios', 'other', 'unity', 'unreal', 'web'] };
export const gameStatus: JsonSchema = { enum: ['active', 'paused'] };
export const eventStatus: JsonSchema = { enum: ['accepted', 'rejected'] };
export const eventReason: JsonSchema = { enum: [...DECISION_REASONS] };

/** A strict object: every listed property required unless named in `optional`, nothing else allowed. */
export function strictObject(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties).filter((key) => !optional.includes(key)),
    properties,
  };
}

/** The success envelope `{ "data": <name> }`. */
export function dataEnvelope(schemaName: string): JsonSchema {
  return strictObject({ data: ref(schemaName) });
}

/** The error envelope of every failure (the native admission envelope, which allows extra fields, is not this). */
export const ErrorEnvelope: JsonSchema = strictObject({
  error: strictObject({ code: { type: 'string', minLength: 1 }, message: { type: 'string' } }),
});

export const commonSchemas: Record<string, JsonSchema> = { ErrorEnvelope };
