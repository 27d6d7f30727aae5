// Shared steps of the GraphQL console tests: requests to POST /graphql, the REST action body of a mutation, and a
// side-by-side call of one console action or read over REST and over GraphQL.

import { CONSOLE, RECORDS } from '../../support/console.ts';
import { type ApiResponse, api, type TestSystem } from '../../support/system.ts';

export const GRAPHQL = '/graphql';

export interface GraphQLResult {
  status: number;
  headers: Headers;
  body: {
    data?: any;
    errors?: Array<{ message: string; path?: unknown[]; extensions: { code: string; status: number } }>;
  };
}

export async function gql(
  system: TestSystem,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResult> {
  const response = await api(system.url, 'POST', GRAPHQL, {
    token,
    body: { query, ...(variables ? { variables } : {}) },
    headers,
  });
  return response as GraphQLResult;
}

/** Every field of the action result. */
const ACTION_RESULT = 'id mode issuedKey kind';

/** The mutation for a REST action body: `{ type, ...input }` -> `type(input: $input)`, the input as a variable. */
export function mutationOf(action: Record<string, unknown>): { query: string; variables: Record<string, unknown> } {
  const { type, ...input } = action;
  const inputType = `${String(type)[0]!.toUpperCase()}${String(type).slice(1)}Input`;
  return {
    query: `mutation Act($input: ${inputType}!) { result: ${String(type)}(input: $input) { ${ACTION_RESULT} } }`,
    variables: { input },
  };
}

/** An outcome either way: the data, or the error's status and code. */
export type Outcome = { ok: any } | { error: { status: number; code: string } };

export function restOutcome(response: ApiResponse): Outcome {
  if (response.status === 200) return { ok: response.body.data };
  return { error: { status: response.status, code: response.body?.error?.code } };
}

/** A GraphQL outcome of one root field: its value, or its (single) error's extensions. */
export function graphqlOutcome(result: GraphQLResult, field: string): Outcome {
  const errors = result.body.errors ?? [];
  if (errors.length > 0) {
    const { code, status } = errors[0]!.extensions;
    // Validation may report one problem several ways (an unknown type and an unknown field): all with one code.
    if (errors.some((e) => e.extensions.code !== code || e.extensions.status !== status)) {
      throw new Error(`errors with different codes: ${JSON.stringify(errors)}`);
    }
    // Field errors answer 200 with data; a request refused before it ran answers the error's status.
    const expectedHttp = result.body.data === undefined ? status : 200;
    if (result.status !== expectedHttp) throw new Error(`HTTP ${result.status} for ${JSON.stringify(result.body)}`);
    return { error: { status, code } };
  }
  if (result.status !== 200) throw new Error(`HTTP ${result.status} without errors: ${JSON.stringify(result.body)}`);
  return { ok: result.body.data[field] };
}

/** REST's action result has no issuedKey/kind unless issueKey; GraphQL has them as null. */
export function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

export function restAction(system: TestSystem, token: string, action: Record<string, unknown>) {
  return api(system.url, 'POST', CONSOLE, { token, body: action });
}

export async function graphqlAction(system: TestSystem, token: string, action: Record<string, unknown>) {
  const { query, variables } = mutationOf(action);
  return gql(system, token, query, variables);
}

export function restRecords(system: TestSystem, token: string, query: Record<string, string | number>) {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return api(system.url, 'GET', `${RECORDS}?${search}`, { token });
}

/** Every field of the snapshot, nested lists included, as GET /console answers it. */
export const SNAPSHOT_FIELDS = `
  mode unitsPerDollar canCreateUnlimitedOrganization
  organizations { id name unlimitedFunding balanceCredits role createdAt }
  projects { id organizationId name maxPayoutCredits budgetCredits spentCredits createdAt }
  games { id projectId organizationId name platform status maxPayoutCredits budgetCredits spentCredits dailyPlayerCapCredits createdAt }
  keys { id gameId organizationId kind name prefix publicKey createdAt revokedAt }
  players { id gameId organizationId externalPlayerId creditsUserId username linkedAt createdAt }
  events { id eventId gameId organizationId playerId eventType occurredAt status reason rewardCredits createdAt }
  rules { id gameId organizationId eventType rewardCredits active createdAt }
  members { id organizationId identityUserId role createdAt }
  limits { players events }`;

export const RECORDS_QUERY = `
  query Records($kind: RecordKind!, $first: Int, $after: String, $organizationId: UUID, $projectId: UUID, $gameId: UUID) {
    records(kind: $kind, first: $first, after: $after, organizationId: $organizationId, projectId: $projectId, gameId: $gameId) {
      kind
      edges {
        cursor
        node {
          id gameId organizationId createdAt
          ... on DeveloperPlayer { externalPlayerId creditsUserId username linkedAt }
          ... on DeveloperEvent { eventId playerId eventType occurredAt status reason rewardCredits }
        }
      }
      pageInfo { endCursor hasNextPage startCursor hasPreviousPage }
    }
  }`;

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIME_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const KEY_TEXT = /^(cr_(?:sk|pk)_sandbox_)[A-Za-z0-9_-]+$/;

/**
 * What two objects built by the same steps share: every UUID becomes a label in order of first appearance,
 * timestamps become `<time>`, key material keeps only its kind prefix. Everything else is compared as is.
 */
export function canonical(value: unknown, labels: Map<string, string> = new Map()): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item, labels));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, canonical(item, labels)]));
  }
  if (typeof value !== 'string') return value;
  if (UUID_TEXT.test(value)) {
    if (!labels.has(value)) labels.set(value, `<id ${labels.size + 1}>`);
    return labels.get(value);
  }
  if (TIME_TEXT.test(value)) return '<time>';
  const key = KEY_TEXT.exec(value);
  return key ? `${key[1]}<random>` : value;
}

/** The part of a snapshot that belongs to one organization. */
export type OrganizationView = Record<
  'organizations' | 'projects' | 'games' | 'keys' | 'rules' | 'members' | 'players' | 'events',
  any[]
>;

export function organizationView(snapshot: any, organizationId: string): OrganizationView {
  const mine = (list: any[]) => list.filter((item) => item.organizationId === organizationId);
  return {
    organizations: snapshot.organizations.filter((o: any) => o.id === organizationId),
    projects: mine(snapshot.projects),
    games: mine(snapshot.games),
    keys: mine(snapshot.keys),
    rules: mine(snapshot.rules),
    members: mine(snapshot.members),
    players: mine(snapshot.players),
    events: mine(snapshot.events),
  };
}

/** Prometheus counter values of transport_requests_total by subject (all outcomes added up). */
export async function transportRequests(system: TestSystem): Promise<Map<string, number>> {
  const response = await api(system.url, 'GET', '/metrics');
  const counts = new Map<string, number>();
  for (const line of String(response.body).split('\n')) {
    const match = /^transport_requests_total\{(.*)\} (\d+(?:\.\d+)?)$/.exec(line);
    if (!match) continue;
    const subject = /subject="([^"]+)"/.exec(match[1]!)?.[1];
    if (subject) counts.set(subject, (counts.get(subject) ?? 0) + Number(match[2]));
  }
  return counts;
}

/** Requests sent per subject between two readings of transportRequests. */
export function requestsBetween(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [subject, count] of after) {
    const sent = count - (before.get(subject) ?? 0);
    if (sent > 0) delta[subject] = sent;
  }
  return delta;
}
