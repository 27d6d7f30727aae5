// The developer limits' cost of a GraphQL operation (auth/developer-limits.ts): admission took DEVELOPER_COSTS.request
// for the HTTP request; once the operation is resolved, before any field runs, its expensive root fields cost the
// rest: the snapshot once (one GetSnapshot per request, however often it is asked for), each record page (`records`,
// `decisions`, `linkIntents`, `decisionStats`, `webhookDeliveries`, `auditLog`, `search`, which also reads the snapshot),
// `simulateRule` (and one of the developer's and the process's dry-run slots), and one per mutation. Past a limit the
// whole request is refused, 429 TOO_MANY_REQUESTS, with no `data`.
import type { ApolloServerPlugin } from '@apollo/server';
import { type FragmentDefinitionNode, Kind, type OperationDefinitionNode } from 'graphql';
import { DEVELOPER_COSTS } from '../auth/developer-limits.ts';
import type { GraphQLContext } from './context.ts';
import { rootFields } from './errors.ts';

const RECORD_PAGE_FIELDS = new Set([
  'records',
  'decisions',
  'linkIntents',
  'decisionStats',
  'search',
  'webhookDeliveries',
  'auditLog',
]);

/** What an operation costs in all, and whether it runs a rule dry-run. */
export function operationCost(
  operation: OperationDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
): { cost: number; simulation: boolean } {
  let cost = 0;
  let snapshot = false;
  let simulation = false;
  for (const field of rootFields(operation.selectionSet, fragments)) {
    const name = field.name.value;
    if (name.startsWith('__')) continue;
    if (operation.operation === 'mutation') cost += DEVELOPER_COSTS.request;
    else if (name === 'snapshot') snapshot = true;
    else if (RECORD_PAGE_FIELDS.has(name)) {
      cost += DEVELOPER_COSTS.recordPage;
      // The search names the console objects it found from the request's snapshot.
      if (name === 'search') snapshot = true;
    } else if (name === 'simulateRule') {
      cost += DEVELOPER_COSTS.simulation;
      simulation = true;
    }
  }
  if (snapshot) cost += DEVELOPER_COSTS.snapshot;
  return { cost: Math.max(cost, DEVELOPER_COSTS.request), simulation };
}

export const developerCostPlugin: ApolloServerPlugin<GraphQLContext> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, document, contextValue }) {
        if (!operation) return;
        const fragments = new Map(
          document.definitions
            .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
            .map((f) => [f.name.value, f]),
        );
        const { cost, simulation } = operationCost(operation, fragments);
        await contextValue.chargeOperation(cost - DEVELOPER_COSTS.request, simulation);
      },
    };
  },
};
