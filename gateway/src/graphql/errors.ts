// Errors of the GraphQL console (CONTRACT section 9): every error carries `extensions.code` and `extensions.status`
// equal to what REST answers for the same call.
//
// - A failure of a resolver is the AppError the shared console service or the ledger raised: its code and status.
// - A request GraphQL refuses before running it (variables that do not coerce, a literal a scalar refuses, an
//   unknown input field, a missing argument, ...) is the input error of the REST call it stands for: `invalid_action`
//   in a mutation (REST: a body that violates the action's schema), `INVALID_RECORD_QUERY` for `records` and
//   `decisions` (REST: a malformed query parameter), `INVALID_REQUEST` otherwise; all 400.
// - A document that does not parse, a malformed GraphQL request and a limit exceeded: 400 `INVALID_REQUEST`.
// - Anything else is a bug: 500 `internal_error` with REST's message; stack traces only when NODE_ENV=development.
import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLFormattedError,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { AppError } from '#runtime/errors.ts';
import type { Logger } from '#runtime/logger.ts';

/** Apollo's codes for a request that is not a well-formed GraphQL request. */
const MALFORMED_REQUEST_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'PERSISTED_QUERY_NOT_FOUND',
]);
/** Apollo's codes for input GraphQL refused; answered as the input error of the field they belong to. */
const INPUT_CODES = new Set(['GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);

export const INTERNAL_MESSAGE = 'The service failed to handle the request.';

/** A GraphQL response body for an AppError raised before GraphQL ran (platform switch, admission, body limits). */
export function requestErrorBody(error: AppError): { errors: GraphQLFormattedError[] } {
  return {
    errors: [{ message: error.message, extensions: { code: error.code, status: error.status, ...error.extra } }],
  };
}

export function findAppError(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth += 1) {
    if (current instanceof AppError) return current;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

// Apollo's refusal tells a server author to pass `introspection: true`; a client needs the variable that does it.
const INTROSPECTION_REFUSED = /introspection is not allowed/i;
const INTROSPECTION_OFF_MESSAGE =
  'GraphQL introspection is not allowed on this server: it is off on a deployment unless GRAPHQL_INTROSPECTION=true ' +
  '(on by default only on the embedded development default). The schema is in schema.graphql (docs/graphql.md).';

const clientMessage = (message: string) => (INTROSPECTION_REFUSED.test(message) ? INTROSPECTION_OFF_MESSAGE : message);

/** graphql-js's suggestions ("Did you mean ...?"), always at the end of its messages. */
const SUGGESTION = /\s*Did you mean .*$/s;

/**
 * A message of graphql-js without its suggestions of field, argument, type and enum value names: the schema stays
 * unknown to whoever cannot introspect it (Apollo's hideSchemaDetailsFromClientErrors masks field suggestions of
 * validation only, not those of variable coercion, such as an enum value's).
 */
export function withoutSuggestions(message: string): string {
  return message.replace(SUGGESTION, '');
}

/**
 * Apollo's `formatError`: REST's code and status on every error; the rest of Apollo's extensions dropped; with
 * `hideSuggestions` (introspection off), no "Did you mean" in GraphQL's own messages.
 */
export function errorFormatter(logger: Logger, development: boolean, hideSuggestions: boolean) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    if (hideSuggestions) formatted = { ...formatted, message: withoutSuggestions(formatted.message) };
    const where = {
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
    };
    const stacktrace =
      development && formatted.extensions?.stacktrace ? { stacktrace: formatted.extensions.stacktrace } : {};
    const appError = findAppError(error);
    if (appError) {
      return {
        message: appError.message,
        ...where,
        extensions: { code: appError.code, status: appError.status, ...appError.extra, ...stacktrace },
      };
    }
    const code = String(formatted.extensions?.code ?? '');
    if (MALFORMED_REQUEST_CODES.has(code)) {
      return {
        message: clientMessage(formatted.message),
        ...where,
        extensions: { code: 'INVALID_REQUEST', status: 400, ...stacktrace },
      };
    }
    if (INPUT_CODES.has(code)) {
      // The REST code depends on the field the error belongs to: settled by the plugin below, which sees the document.
      return { message: clientMessage(formatted.message), ...where, extensions: { code, status: 400, ...stacktrace } };
    }
    logger.error({ err: error }, 'GraphQL request failed');
    return {
      message: development ? formatted.message : INTERNAL_MESSAGE,
      ...where,
      extensions: { code: 'internal_error', status: 500, ...stacktrace },
    };
  };
}

// ---- which field an input error belongs to ----

type Range = { start: number; end: number };

function lineOffsets(source: string): number[] {
  const starts = [0];
  for (let i = 0; i < source.length; i += 1) {
    const c = source.charCodeAt(i);
    // GraphQL line terminators: \n, \r\n, \r.
    if (c === 10 || (c === 13 && source.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return starts;
}

function contains(range: Range | undefined, offset: number): boolean {
  return range !== undefined && range.start <= offset && offset < range.end;
}

/** The ranges of the document a root field owns: itself, the fragments it spreads, the variables it uses. */
function ownedRanges(
  field: FieldNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Map<string, Range>,
): Range[] {
  const ranges: Range[] = field.loc ? [field.loc] : [];
  const seen = new Set<string>();
  const walk = (node: FieldNode | FragmentDefinitionNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const name = spread.name.value;
        const fragment = fragments.get(name);
        if (seen.has(name) || !fragment) return;
        seen.add(name);
        if (fragment.loc) ranges.push(fragment.loc);
        walk(fragment);
      },
      Variable(variable) {
        const range = variables.get(variable.name.value);
        if (range) ranges.push(range);
      },
    });
  walk(field);
  return ranges;
}

/** The root fields of a selection set, through fragments and inline fragments. */
export function rootFields(
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
): FieldNode[] {
  const fields: FieldNode[] = [];
  const seen = new Set<string>();
  const collect = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(selectionSet);
  return fields;
}

/**
 * The root fields whose input errors are REST's malformed records query (decisions is a search over events records;
 * auditLog has the records' errors, CONTRACT section 11.2).
 */
const RECORD_QUERY_FIELDS = new Set(['records', 'decisions', 'auditLog']);

/** The REST input-error code for an input error at `offset` (or without a location) of the document. */
export function inputErrorCode(document: DocumentNode, operationName: string | undefined, offset?: number): string {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const operation =
    (offset === undefined ? undefined : operations.find((o) => contains(o.loc, offset))) ??
    getOperationAST(document, operationName) ??
    undefined;
  if (!operation) return 'INVALID_REQUEST';
  if (operation.operation === 'mutation') return 'invalid_action';
  if (offset === undefined) return 'INVALID_REQUEST';
  const variables = new Map<string, Range>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.loc) variables.set(definition.variable.name.value, definition.loc);
  }
  const owners = rootFields(operation.selectionSet, fragments).filter((field) =>
    ownedRanges(field, fragments, variables).some((range) => contains(range, offset)),
  );
  return owners.length > 0 && owners.every((field) => RECORD_QUERY_FIELDS.has(field.name.value))
    ? 'INVALID_RECORD_QUERY'
    : 'INVALID_REQUEST';
}

/**
 * Settles the code of input errors (see above) and answers a request GraphQL refused before running it (no `data`)
 * with its errors' HTTP status, as REST would; a request that ran answers 200 with its field errors.
 */
export function errorStatusPlugin<C extends object>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse(requestContext: GraphQLRequestContext<C>) {
          const { body, http } = requestContext.response;
          if (body?.kind !== 'single') return;
          const result = body.singleResult as { data?: unknown; errors?: GraphQLFormattedError[] };
          if (!result.errors?.length) return;
          const { document, source } = requestContext;
          const operationName = requestContext.request.operationName ?? undefined;
          const starts = source === undefined ? [] : lineOffsets(source);
          result.errors = result.errors.map((error) => {
            if (!INPUT_CODES.has(String(error.extensions?.code))) return error;
            const location = error.locations?.[0];
            const offset =
              location && starts[location.line - 1] !== undefined
                ? (starts[location.line - 1] as number) + location.column - 1
                : undefined;
            const code = document ? inputErrorCode(document, operationName, offset) : 'INVALID_REQUEST';
            return { ...error, extensions: { ...error.extensions, code } };
          });
          if (result.data === undefined) {
            const status = Number(result.errors[0]?.extensions?.status);
            http.status = Number.isInteger(status) ? status : 400;
          }
        },
      };
    },
  };
}
