// The link and player shapes of the spec (Link and player shapes) as JSON Schema 2020-12, strict (no unknown
// fields), usable as-is in the OpenAPI 3.1 document. Requests are validated with them at the edge; the tests validate
// every response against them.
import { dateTimeSchema as dateTime, uuidSchema as uuid } from '#runtime/contracts/json-schema.ts';

const mode = { const: 'sandbox' } as const;

/** 1..200 characters, no control characters (U+0000-U+001F, U+007F). */
export const EXTERNAL_PLAYER_ID_PATTERN = '^[^\\u0000-\\u001f\\u007f]*$';
export const externalPlayerIdSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: EXTERNAL_PLAYER_ID_PATTERN,
} as const;

/** Link token input: 32..200 characters; only issued tokens (cr_link_sandbox_ + 43 base64url) can be known. */
export const LINK_TOKEN_LENGTH_MIN = 32;
export const LINK_TOKEN_LENGTH_MAX = 200;

const strict = <P extends Record<string, unknown>>(title: string, properties: P) =>
  ({
    title,
    type: 'object',
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  }) as const;

export const createLinkIntentSchema = strict('CreateLinkIntent', { externalPlayerId: externalPlayerIdSchema });

const linkTokenInput = {
  type: 'string',
  minLength: LINK_TOKEN_LENGTH_MIN,
  maxLength: LINK_TOKEN_LENGTH_MAX,
} as const;
export const inspectLinkIntentSchema = strict('InspectLinkIntent', { linkToken: linkTokenInput });
export const approveLinkIntentSchema = strict('ApproveLinkIntent', { linkToken: linkTokenInput });

export const linkIntentResultSchema = strict('LinkIntentResult', {
  playerId: uuid,
  linkToken: { type: 'string', pattern: '^cr_link_sandbox_[A-Za-z0-9_-]{43}$' },
  expiresAt: dateTime,
  mode,
});

export const linkInspectionSchema = strict('LinkInspection', {
  gameName: { type: 'string' },
  externalPlayerId: externalPlayerIdSchema,
  expiresAt: dateTime,
  mode,
});

export const linkApprovalSchema = strict('LinkApproval', {
  playerId: uuid,
  gameId: uuid,
  linked: { const: true },
  mode,
});

export const gamePlayerSchema = strict('GamePlayer', {
  playerId: uuid,
  externalPlayerId: externalPlayerIdSchema,
  linked: { type: 'boolean' },
  linkedAt: { anyOf: [dateTime, { type: 'null' }] },
  mode,
});

/** Every named shape, for the OpenAPI document and the tests. */
export const linkSchemas = {
  CreateLinkIntent: createLinkIntentSchema,
  LinkIntentResult: linkIntentResultSchema,
  InspectLinkIntent: inspectLinkIntentSchema,
  LinkInspection: linkInspectionSchema,
  ApproveLinkIntent: approveLinkIntentSchema,
  LinkApproval: linkApprovalSchema,
  GamePlayer: gamePlayerSchema,
} as const;
