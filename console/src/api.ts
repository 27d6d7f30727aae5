// The console's only server: /graphql (Apollo Client): queries and mutations POST, the live decisions subscription
// goes over a WebSocket at the same path (console/src/live.ts). The session token lives in memory only.
import {
  ApolloClient,
  ApolloLink,
  CombinedGraphQLErrors,
  gql,
  HttpLink,
  InMemoryCache,
  ServerError,
} from '@apollo/client';
import { OperationTypeNode } from 'graphql';
import { from, mergeMap } from 'rxjs';

export const GRAPHQL_PATH = '/graphql';

let sessionToken: string | undefined;

export function setSessionToken(token: string | undefined): void {
  sessionToken = token;
}

export const currentSessionToken = () => sessionToken;

type SessionEndedListener = (failure: ServerFailure) => void;
const sessionEndedListeners = new Set<SessionEndedListener>();

/** The server ended the session (the live socket closed with 4401): the app shows the signed-out state. */
export function endSession(failure: ServerFailure): void {
  for (const listener of [...sessionEndedListeners]) listener(failure);
}

export function onSessionEnded(listener: SessionEndedListener): () => void {
  sessionEndedListeners.add(listener);
  return () => {
    sessionEndedListeners.delete(listener);
  };
}

// Whether the service answers, from every request the console makes: since when it has not (a refused or dropped
// connection, or a 502/503/504: the gateway or what is behind it down), or undefined while it answers. The console
// shows one notice for all pages from it (App.tsx), so that data read before is not taken for current.
let unreachableSince: number | undefined;
const connectivityListeners = new Set<() => void>();

function markReachable(reachable: boolean): void {
  const next = reachable ? undefined : (unreachableSince ?? Date.now());
  if (next === unreachableSince) return;
  unreachableSince = next;
  for (const listener of [...connectivityListeners]) listener();
}

/** Since when the service has not answered (Date.now()), or undefined while it answers. */
export const serviceUnreachableSince = () => unreachableSince;

/** Calls `listener` whenever the service stops or starts answering; returns the unsubscribe. */
export function onConnectivity(listener: () => void): () => void {
  connectivityListeners.add(listener);
  return () => {
    connectivityListeners.delete(listener);
  };
}

const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

const httpLink = new HttpLink({
  uri: GRAPHQL_PATH,
  fetch: async (input, init) => {
    const headers = new Headers(init?.headers);
    if (sessionToken) headers.set('Authorization', `Bearer ${sessionToken}`);
    try {
      const response = await fetch(input, { ...init, headers });
      markReachable(!UNAVAILABLE_STATUSES.has(response.status));
      return response;
    } catch (error) {
      // A request the console itself cancelled says nothing about the service.
      if (!(error instanceof DOMException && error.name === 'AbortError')) markReachable(false);
      throw error;
    }
  },
});

// Subscriptions go over the WebSocket link, loaded with the first subscription (the game page), so that the first
// page does not carry graphql-ws; queries and mutations POST as before.
const socketLink = new ApolloLink((operation) =>
  from(import('./live.ts')).pipe(mergeMap(({ liveLink }) => liveLink.request(operation))),
);

export const client = new ApolloClient({
  link: ApolloLink.split(
    (operation) => operation.operationType === OperationTypeNode.SUBSCRIPTION,
    socketLink,
    httpLink,
  ),
  cache: new InMemoryCache({ possibleTypes: { DeveloperRecord: ['DeveloperPlayer', 'DeveloperEvent'] } }),
  defaultOptions: {
    query: { fetchPolicy: 'network-only' },
    watchQuery: { fetchPolicy: 'cache-and-network' },
  },
});

export interface ServerFailure {
  code: string;
  message: string;
}

/** The server's code and message of a failed operation (GraphQL errors carry REST's code in extensions.code). */
export function failureOf(error: unknown): ServerFailure {
  if (CombinedGraphQLErrors.is(error)) {
    const first = error.errors[0];
    return { code: String(first?.extensions?.code ?? 'error'), message: first?.message ?? error.message };
  }
  if (ServerError.is(error)) {
    try {
      const body = JSON.parse(error.bodyText) as {
        errors?: Array<{ message: string; extensions?: { code?: string } }>;
      };
      const first = body.errors?.[0];
      if (first) return { code: String(first.extensions?.code ?? error.statusCode), message: first.message };
    } catch {
      // not JSON
    }
    return { code: String(error.statusCode), message: error.message };
  }
  return { code: 'network_error', message: error instanceof Error ? error.message : String(error) };
}

export type Role = 'owner' | 'admin' | 'viewer';
export const canWrite = (role: Role | undefined) => role === 'owner' || role === 'admin';
export const canManageMembers = (role: Role | undefined) => role === 'owner';

export interface Organization {
  id: string;
  name: string;
  role: Role;
  unlimitedFunding: boolean;
  balanceCredits: number;
  createdAt: string;
  /** False: an owner added the caller, who has not accepted (acceptMembership). */
  joined: boolean;
}
export interface Project {
  id: string;
  organizationId: string;
  name: string;
  maxPayoutCredits: number;
  budgetCredits: number;
  spentCredits: number;
}
export interface Game {
  id: string;
  projectId: string;
  organizationId: string;
  name: string;
  platform: string;
  status: 'active' | 'paused';
  maxPayoutCredits: number;
  budgetCredits: number;
  spentCredits: number;
  dailyPlayerCapCredits: number;
  /** The game's clock when the snapshot was read: real time plus advancedSeconds (advanceGameClock). */
  clock: { now: string; advancedSeconds: number };
}
export interface Key {
  id: string;
  gameId: string;
  kind: 'public' | 'secret';
  name: string;
  prefix: string;
  publicKey: string | null;
  createdAt: string;
  revokedAt: string | null;
}
export interface Rule {
  id: string;
  gameId: string;
  eventType: string;
  rewardCredits: number;
  active: boolean;
  createdAt: string;
}
export interface Member {
  id: string;
  organizationId: string;
  identityUserId: string;
  /** From the operator invitation bound to identityUserId; null until the member joined (docs/identity.md). */
  email: string | null;
  role: Role;
  createdAt: string;
  /** The member joined by their own act (created the organization, or accepted). */
  joined: boolean;
}
export interface Snapshot {
  canCreateUnlimitedOrganization: boolean;
  organizations: Organization[];
  projects: Project[];
  games: Game[];
  keys: Key[];
  rules: Rule[];
  members: Member[];
}

export const SNAPSHOT = gql`
  query ConsoleSnapshot {
    snapshot {
      canCreateUnlimitedOrganization
      organizations { id name role unlimitedFunding balanceCredits createdAt joined }
      projects { id organizationId name maxPayoutCredits budgetCredits spentCredits }
      games {
        id projectId organizationId name platform status maxPayoutCredits budgetCredits spentCredits
        dailyPlayerCapCredits clock { now advancedSeconds }
      }
      keys { id gameId kind name prefix publicKey createdAt revokedAt }
      rules { id gameId eventType rewardCredits active createdAt }
      members { id organizationId identityUserId email role createdAt joined }
    }
  }
`;

export const SIMULATE_RULE = gql`
  query ConsoleSimulateRule($input: SimulateRuleInput!) {
    simulateRule(input: $input) {
      from to considered spentBeforeCredits flipCount
      stored { accepted rejected creditsSpent reasons { reason count } }
      proposed { accepted rejected creditsSpent reasons { reason count } }
      days { day stored { accepted rejected creditsSpent } proposed { accepted rejected creditsSpent } }
      flips {
        id eventId playerId eventType createdAt
        stored { status reason rewardCredits }
        proposed { status reason rewardCredits }
      }
    }
  }
`;

export interface SimulationFigures {
  accepted: number;
  rejected: number;
  creditsSpent: number;
  reasons?: Array<{ reason: string; count: number }>;
}
export interface SimulationDecision {
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: number;
}
export interface RuleSimulation {
  from: string;
  to: string;
  considered: number;
  spentBeforeCredits: number;
  flipCount: number;
  stored: SimulationFigures;
  proposed: SimulationFigures;
  days: Array<{ day: string; stored: SimulationFigures; proposed: SimulationFigures }>;
  flips: Array<{
    id: string;
    eventId: string;
    playerId: string;
    eventType: string;
    createdAt: string;
    stored: SimulationDecision;
    proposed: SimulationDecision;
  }>;
}

export const ACCESS = gql`
  query ConsoleAccess {
    access { authorized email mode }
  }
`;

export const RECORDS = gql`
  query ConsoleRecords($kind: RecordKind!, $first: Int, $after: String, $organizationId: UUID, $projectId: UUID, $gameId: UUID) {
    records(kind: $kind, first: $first, after: $after, organizationId: $organizationId, projectId: $projectId, gameId: $gameId) {
      edges {
        cursor
        node {
          id gameId organizationId createdAt
          ... on DeveloperEvent { eventId playerId eventType occurredAt status reason rewardCredits }
          ... on DeveloperPlayer { externalPlayerId creditsUserId username linkedAt test }
        }
      }
      pageInfo { endCursor hasNextPage }
    }
  }
`;

export interface EventRecord {
  __typename: 'DeveloperEvent';
  id: string;
  gameId: string;
  organizationId: string;
  createdAt: string;
  eventId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: number;
}
export interface PlayerRecord {
  __typename: 'DeveloperPlayer';
  id: string;
  gameId: string;
  organizationId: string;
  createdAt: string;
  externalPlayerId: string;
  creditsUserId: string | null;
  username: string | null;
  linkedAt: string | null;
  /** Linked by createTestPlayer to a test account of the sandbox. */
  test?: boolean;
}
export interface RecordsPage {
  records: {
    edges: Array<{ cursor: string; node: EventRecord | PlayerRecord }>;
    pageInfo: { endCursor: string | null; hasNextPage: boolean };
  } | null;
}

export const LINK_INTENTS = gql`
  query ConsoleLinkIntents($gameId: UUID!, $first: Int, $after: String) {
    linkIntents(gameId: $gameId, first: $first, after: $after) {
      edges {
        cursor
        node { id playerId externalPlayerId state createdAt expiresAt consumedAt }
      }
      pageInfo { endCursor hasNextPage }
    }
  }
`;

export interface LinkIntent {
  id: string;
  playerId: string;
  externalPlayerId: string;
  state: 'pending' | 'consumed' | 'expired';
  createdAt: string;
  expiresAt: string;
  consumedAt: string | null;
}
export interface LinkIntentsPage {
  linkIntents: {
    edges: Array<{ cursor: string; node: LinkIntent }>;
    pageInfo: { endCursor: string | null; hasNextPage: boolean };
  } | null;
}

export const WEBHOOK_ENDPOINTS = gql`
  query ConsoleWebhookEndpoints($gameId: UUID!) {
    webhookEndpoints(gameId: $gameId) {
      id url eventTypes enabled disabledReason failingSince createdAt previousSecretExpiresAt
    }
  }
`;

export interface WebhookEndpoint {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  createdAt: string;
  /** While the secret replaced by the last rotation still signs: until when. */
  previousSecretExpiresAt: string | null;
}

export const WEBHOOK_DELIVERIES = gql`
  query ConsoleWebhookDeliveries($id: UUID!, $first: Int, $after: String, $filter: WebhookDeliveryFilter) {
    webhookDeliveries(webhookEndpointId: $id, first: $first, after: $after, filter: $filter) {
      deliveries {
        id eventType state createdAt nextAttemptAt finishedAt payload
        attempts { attempt startedAt latencyMs statusCode error responseExcerpt }
      }
      nextCursor
    }
  }
`;

/** Only the ids of a page of deliveries: how many match a filter, up to a page ("Recover failed since…" asks). */
export const WEBHOOK_DELIVERY_IDS = gql`
  query ConsoleWebhookDeliveryIds($id: UUID!, $first: Int, $filter: WebhookDeliveryFilter) {
    webhookDeliveries(webhookEndpointId: $id, first: $first, filter: $filter) {
      deliveries { id }
      nextCursor
    }
  }
`;

export interface WebhookDelivery {
  id: string;
  eventType: string;
  state: 'pending' | 'delivered' | 'failed';
  createdAt: string;
  nextAttemptAt: string | null;
  finishedAt: string | null;
  payload: string;
  attempts: Array<{
    attempt: number;
    startedAt: string;
    latencyMs: number;
    statusCode: number | null;
    error: string | null;
    responseExcerpt: string;
  }>;
}

export const ACTION_INPUTS: Record<string, string> = {
  createOrganization: 'CreateOrganizationInput',
  fundOrganization: 'FundOrganizationInput',
  createProject: 'CreateProjectInput',
  updateProject: 'UpdateProjectInput',
  allocateProject: 'AllocateProjectInput',
  createGame: 'CreateGameInput',
  updateGame: 'UpdateGameInput',
  allocateGame: 'AllocateGameInput',
  createRule: 'CreateRuleInput',
  updateRule: 'UpdateRuleInput',
  issueKey: 'IssueKeyInput',
  revokeKey: 'RevokeKeyInput',
  addMember: 'AddMemberInput',
  updateMember: 'UpdateMemberInput',
  removeMember: 'RemoveMemberInput',
  acceptMembership: 'AcceptMembershipInput',
  createWebhookEndpoint: 'CreateWebhookEndpointInput',
  updateWebhookEndpoint: 'UpdateWebhookEndpointInput',
  deleteWebhookEndpoint: 'WebhookEndpointInput',
  rotateWebhookSecret: 'WebhookEndpointInput',
  sendTestWebhook: 'WebhookEndpointInput',
  redeliverWebhook: 'RedeliverWebhookInput',
  recoverWebhookDeliveries: 'RecoverWebhookDeliveriesInput',
  advanceGameClock: 'AdvanceGameClockInput',
  createTestPlayer: 'CreateTestPlayerInput',
};

export interface ActionResult {
  id: string;
  issuedKey: string | null;
  kind: string | null;
  /** createWebhookEndpoint, rotateWebhookSecret: the signing secret, shown this once. */
  secret: string | null;
}

const documents = new Map<string, ReturnType<typeof gql>>();

/** Runs one console action (a mutation named as the action); throws the server's failure. */
export async function runAction(action: string, input: Record<string, unknown>): Promise<ActionResult> {
  let document = documents.get(action);
  if (!document) {
    document = gql(
      `mutation Console_${action}($input: ${ACTION_INPUTS[action]}!) { ${action}(input: $input) { id issuedKey kind secret } }`,
    );
    documents.set(action, document);
  }
  let result: Awaited<ReturnType<typeof client.mutate>>;
  try {
    result = await client.mutate({ mutation: document, variables: { input }, errorPolicy: 'all' });
  } catch (error) {
    throw failureOf(error);
  }
  if (result.error) throw failureOf(result.error);
  const value = (result.data as Record<string, ActionResult | null> | undefined)?.[action];
  if (!value) throw { code: 'error', message: 'No result.' } satisfies ServerFailure;
  return value;
}

export const isFailure = (value: unknown): value is ServerFailure =>
  typeof value === 'object' && value !== null && 'code' in value && 'message' in value;

export const AUDIT_LOG = gql`
  query ConsoleAuditLog($organizationId: ID!, $filter: AuditFilter, $first: Int, $after: String) {
    auditLog(organizationId: $organizationId, filter: $filter, first: $first, after: $after) {
      edges {
        node {
          id organizationId projectId gameId action targetKind targetId changes requestId createdAt
          actor { identityUserId email }
        }
      }
      pageInfo { endCursor hasNextPage }
    }
  }
`;

/** One audit entry: a successful console action (who, what, on which object, each field's from and to). */
export interface AuditEntry {
  id: string;
  organizationId: string;
  projectId: string | null;
  gameId: string | null;
  action: string;
  targetKind: string | null;
  targetId: string;
  changes: Record<string, { from: unknown; to: unknown }>;
  requestId: string | null;
  createdAt: string;
  actor: { identityUserId: string; email: string | null };
}

/** The audit trail's filters (AuditFilter): each one given must match. */
export interface AuditFilter {
  projectId?: string;
  gameId?: string;
  actor?: string;
  action?: string;
  from?: string;
  to?: string;
}

/** One page of an organization's audit trail, newest first; throws the server's failure. */
export async function auditPage(
  organizationId: string,
  filter: AuditFilter,
  first: number,
  after?: string,
): Promise<{ entries: AuditEntry[]; endCursor: string | null; hasNextPage: boolean }> {
  const result = await client.query<{
    auditLog: {
      edges: Array<{ node: AuditEntry }>;
      pageInfo: { endCursor: string | null; hasNextPage: boolean };
    } | null;
  }>({
    query: AUDIT_LOG,
    variables: { organizationId, filter, first, after },
    fetchPolicy: 'network-only',
    errorPolicy: 'all',
  });
  if (result.error) throw failureOf(result.error);
  const page = result.data?.auditLog;
  return {
    entries: page?.edges.map((edge) => edge.node) ?? [],
    endCursor: page?.pageInfo.endCursor ?? null,
    hasNextPage: page?.pageInfo.hasNextPage ?? false,
  };
}
