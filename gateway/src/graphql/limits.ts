// Bounds on what one GraphQL request may ask (CONTRACT section 9: depth and cost are limited). GraphQL Armor's
// validation rules count depth, aliases, directives and cost on the document before anything runs; graphql-js's
// own parser bounds the tokens; the body is at most 16,384 bytes (like every JSON body of the API) and
// RECORD_PAGES_PER_REQUEST_MAX bounds the ListRecords calls at run time (context.ts).
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationContext } from 'graphql';
import { AppError } from '#runtime/errors.ts';

export const GRAPHQL_LIMITS = {
  /** Field nesting (fragments flattened): `snapshot { organizations { projects { games { keys { id } } } } }` is 6. */
  depth: 8,
  /** Aliased fields per operation. */
  aliases: 15,
  /** Directives per operation. */
  directives: 10,
  /**
   * Armor's cost: 1 per scalar, 2 per object, each level weighted by 1.5 and a field multiplied by its literal
   * `first`. A full snapshot costs about 200, a records page of 100 with every field about 8,500: two such pages and
   * a snapshot fit, three pages do not. (`first` given as a variable escapes the multiplier: context.ts bounds the
   * record pages of a request instead.)
   */
  cost: 20_000,
  /** Lexical tokens of the document (graphql-js parser option). */
  tokens: 2_000,
} as const;

/** A limit exceeded: reported as a validation error whose original error is REST's 400 INVALID_REQUEST. */
function reject(context: ValidationContext | null, error: GraphQLError): void {
  const message = error.message.replace(/^Syntax Error: /, '');
  context?.reportError(new GraphQLError(message, { originalError: new AppError('INVALID_REQUEST', message) }));
}

const reporting = { onReject: [reject], propagateOnRejection: false };

/** Armor's validation rules (and plugins, none with this configuration). */
export function armor() {
  const { plugins, validationRules } = new ApolloArmor({
    maxDepth: { n: GRAPHQL_LIMITS.depth, flattenFragments: true, ...reporting },
    maxAliases: { n: GRAPHQL_LIMITS.aliases, ...reporting },
    maxDirectives: { n: GRAPHQL_LIMITS.directives, ...reporting },
    costLimit: { maxCost: GRAPHQL_LIMITS.cost, flattenFragments: true, ...reporting },
    // graphql-js's `maxTokens` parser option does this without a plugin that throws from a parsing hook.
    maxTokens: { enabled: false },
    // Apollo's hideSchemaDetailsFromClientErrors masks field suggestions (server.ts).
    blockFieldSuggestion: { enabled: false },
  }).protect();
  return { plugins, validationRules };
}
