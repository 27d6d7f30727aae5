// Validation of the linking requests at the edge. Each answers the parsed input or the code the contract's order
// gives a failure (docs/links.md). Messages name the field and the rule, never the value: a link token sent to the
// wrong place must not come back in an error message, nor reach a log line through one.
import type { ErrorCode } from '#runtime/contracts/error-codes.ts';
import {
  approveLinkIntentSchema,
  createLinkIntentSchema,
  externalPlayerIdSchema,
  inspectLinkIntentSchema,
} from '#runtime/contracts/link-shapes.ts';
import { LINK_TOKEN_PATTERN } from '#runtime/credentials/keys.ts';
import { ajvOnFirstUse, compiledOnFirstUse, describeAjvError } from '#runtime/validation/ajv.ts';

/** A failure names its status: `invalid_link` has three (400 for a malformed body, docs/links.md). */
export type Checked<T> = { ok: true; value: T } | { ok: false; status: number; code: ErrorCode; message: string };

const ajv = ajvOnFirstUse();

/** The first error, without echoing an unknown field's name (it could be a token sent as a key). */
function describe(errors: Parameters<typeof describeAjvError>[0], allowed: string): string {
  const first = errors?.[0];
  if (first?.keyword === 'additionalProperties') return `body has an unknown field; only ${allowed} is allowed`;
  return describeAjvError(errors);
}
const createValidator = compiledOnFirstUse(() => ajv().compile(createLinkIntentSchema));
const inspectValidator = compiledOnFirstUse(() => ajv().compile(inspectLinkIntentSchema));
const approveValidator = compiledOnFirstUse(() => ajv().compile(approveLinkIntentSchema));
const externalPlayerIdValidator = compiledOnFirstUse(() => ajv().compile(externalPlayerIdSchema));

/** A CreateLinkIntent body: schema violations and unknown fields are 400 INVALID_PLAYER. */
export function checkCreateLinkIntent(body: unknown): Checked<{ externalPlayerId: string }> {
  if (!createValidator(body)) {
    return {
      ok: false,
      code: 'INVALID_PLAYER',
      status: 400,
      message: describe(createValidator.errors, 'externalPlayerId'),
    };
  }
  return { ok: true, value: body as { externalPlayerId: string } };
}

/**
 * An InspectLinkIntent or ApproveLinkIntent body: schema violations and unknown fields are 400 invalid_link.
 * `wellFormed` says whether the token can be an issued one at all (an issued token has exactly that form; any other
 * value within the length limits is unknown, 404 invalid_link, without asking the ledger).
 */
export function checkLinkTokenBody(
  body: unknown,
  kind: 'inspect' | 'approve',
): Checked<{ linkToken: string; wellFormed: boolean }> {
  const validate = kind === 'inspect' ? inspectValidator : approveValidator;
  if (!validate(body))
    return { ok: false, code: 'invalid_link', status: 400, message: describe(validate.errors, 'linkToken') };
  const { linkToken } = body as { linkToken: string };
  return { ok: true, value: { linkToken, wellFormed: LINK_TOKEN_PATTERN.test(linkToken) } };
}

/**
 * The query of GET /api/game-sdk/v2/players: exactly one `externalPlayerId` (1..200 characters, no control
 * characters) and nothing else; anything else is 400 INVALID_PLAYER.
 */
export function checkPlayerQuery(querystring: string): Checked<{ externalPlayerId: string }> {
  const invalid = (message: string) => ({ ok: false as const, code: 'INVALID_PLAYER' as const, status: 400, message });
  const values: string[] = [];
  for (const [parameter, value] of new URLSearchParams(querystring)) {
    if (parameter !== 'externalPlayerId') {
      // The parameter's name is not echoed (it could be a secret sent to the wrong place).
      return invalid('unknown query parameter; only externalPlayerId is allowed');
    }
    values.push(value);
  }
  if (values.length === 0) return invalid('query parameter externalPlayerId is required');
  if (values.length > 1) return invalid('query parameter externalPlayerId is repeated');
  const externalPlayerId = values[0] as string;
  if (!externalPlayerIdValidator(externalPlayerId)) {
    return invalid(describeAjvError(externalPlayerIdValidator.errors, 'query.externalPlayerId'));
  }
  return { ok: true, value: { externalPlayerId } };
}
