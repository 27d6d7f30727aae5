// Schema pieces shared by the API's shapes (spec: General rules, Limits).
// The API document's value fragments come from the runtime's vocabulary (one spelling for every program).
import * as fragments from '#runtime/contracts/json-schema.ts';
import { type JsonSchema, ref } from './json-schema.ts';

export const uuid: JsonSchema = fragments.uuidSchema;
export const dateTime: JsonSchema = fragments.dateTimeSchema;
/** Credit amounts: integers 0 to 1e12. */
export const credits: JsonSchema = fragments.creditsSchema;
/** Allocation, funding and reward amounts: greater than 0. */
export const positiveCredits: JsonSchema = fragments.positiveCreditsSchema;
/** Names of organizations, projects, games and keys: 1 to 100 characters, no control characters. */
export const name: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
};
export const eventType: JsonSchema = fragments.eventTypeSchema;
export const externalPlayerId: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
};
export const mode: JsonSchema = { const: 'sandbox' };
export const role: JsonSchema = fragments.memberRoleSchema;
export const platform: JsonSchema = fragments.platformSchema;
export const gameStatus: JsonSchema = fragments.gameStatusSchema;
export const eventStatus: JsonSchema = fragments.eventStatusSchema;
export const eventReason: JsonSchema = fragments.eventReasonSchema;

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

/** The error object `{ code, message }`: inside the error envelope, and inside a batch item that failed. */
export const ApiError: JsonSchema = {
  description: 'A failure: `code` is stable and machine-readable (docs/errors.md), `message` is for people.',
  ...strictObject({ code: { type: 'string', minLength: 1 }, message: { type: 'string' } }),
};

/** The error envelope of every failure (the native admission envelope, which allows extra fields, is not this). */
export const ErrorEnvelope: JsonSchema = strictObject({ error: ref('ApiError') });

export const commonSchemas: Record<string, JsonSchema> = { ApiError, ErrorEnvelope };
