// Custom scalars of the GraphQL console: values outside the spec's ranges are refused while the request is
// validated (literals) or its variables are coerced, before any resolver runs. The limits are the REST schemas'
// (schemas/common.ts, validation/uuid.ts, validation/ajv.ts), so both views refuse the same values.
import { Kind, type ValueNode } from 'graphql';
import { CREDITS_MAX } from '#runtime/contracts/vocabulary.ts';
import { isRfc3339DateTime } from '#runtime/validation/ajv.ts';
import { isUuid } from '#runtime/validation/uuid.ts';

// A plain error (not a GraphQLError): graphql-js then adds the location and names the expected type.
const invalid = (message: string) => new TypeError(message);

/**
 * A scalar's behaviour, given to makeExecutableSchema as its resolver: a plain object rather than a
 * GraphQLScalarType, whose (absent) description would replace the SDL's.
 */
export interface ScalarBehaviour {
  serialize(value: unknown): unknown;
  parseValue(value: unknown): unknown;
  parseLiteral(node: ValueNode): unknown;
}

function stringScalar(description: string, accepts: (value: string) => boolean): ScalarBehaviour {
  const check = (value: unknown): string => {
    if (typeof value !== 'string' || !accepts(value)) throw invalid(`Must be ${description}.`);
    return value;
  };
  return {
    // Outputs come from the ledger, already in shape; a value that is not would be a bug worth failing on.
    serialize: check,
    parseValue: check,
    parseLiteral(node: ValueNode) {
      if (node.kind !== Kind.STRING) throw invalid(`Must be ${description}.`);
      return check(node.value);
    },
  };
}

function creditsScalar(min: number, description: string): ScalarBehaviour {
  const check = (value: unknown): number => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > CREDITS_MAX) {
      throw invalid(`Must be ${description}.`);
    }
    return value;
  };
  return {
    serialize: check,
    parseValue: check,
    parseLiteral(node: ValueNode) {
      // Integers only: `1.0` and `1e3` are float literals in GraphQL and are refused like non-integers in REST.
      if (node.kind !== Kind.INT) throw invalid(`Must be ${description}.`);
      return check(Number(node.value));
    },
  };
}

// The instants a DateTime may name: PostgreSQL has no year 0 and a DateTime has four-digit years, so the instant in
// UTC lies in years 0001 to 9999 (`0001-01-01T00:00:00+00:01` is in year 0 in UTC). Beyond, the ledger's queries
// failed (500) on the windows of decisionStats and simulateRule.
const DATE_TIME_MIN_MS = Date.parse('0001-01-01T00:00:00.000Z');
const DATE_TIME_MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

export function isStorableDateTime(value: string): boolean {
  if (!isRfc3339DateTime(value)) return false;
  const ms = Date.parse(value);
  return ms >= DATE_TIME_MIN_MS && ms <= DATE_TIME_MAX_MS;
}

/**
 * An event's metadata: a JSON object, answered as the object itself. The ledger hands over the RFC 8785 canonical text
 * it stored; anything but an object's text there is a bug worth failing on. An output type: no argument takes it.
 */
const jsonObjectScalar: ScalarBehaviour = {
  serialize(value: unknown) {
    const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('Must be a JSON object.');
    return parsed;
  },
  parseValue() {
    throw invalid('JSONObject is an output type only.');
  },
  parseLiteral() {
    throw invalid('JSONObject is an output type only.');
  },
};

export const scalars = {
  UUID: stringScalar('a UUID (versions 1 to 8, variant 8, 9, a or b; or the nil or max UUID)', isUuid),
  DateTime: stringScalar(
    'an RFC 3339 date-time with an offset, from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z in UTC',
    isStorableDateTime,
  ),
  Credits: creditsScalar(0, `an integer from 0 to ${CREDITS_MAX}`),
  PositiveCredits: creditsScalar(1, `an integer from 1 to ${CREDITS_MAX}`),
  JSONObject: jsonObjectScalar,
};
