// Resolvers of the GraphQL console. They only translate: arguments become the REST adapters' action bodies and
// records queries, validated with the same JSON Schemas (console/service.ts), and the ledger's replies become the
// same JSON shapes (console/shapes.ts). Nested fields are served from the request's one snapshot (context.ts).

import { SEARCH_TEXT_MAX } from '#runtime/contracts/console-search.ts';
import { decisionFiltersProblem } from '#runtime/contracts/decision-search.ts';
import type { SimulationDecision, SimulationFigures } from '#runtime/contracts/gen/rewards/v1/simulation_pb.ts';
import { simulationInputProblem } from '#runtime/contracts/simulation.ts';
import { AppError } from '#runtime/errors.ts';
import {
  epochMicros,
  readAudit,
  readDecisionStats,
  readDecisions,
  readLinkIntents,
  readRecords,
  readRuleSimulation,
  readSearch,
  readWebhookDeliveries,
  readWebhookEndpoints,
  runAction,
  validateAction,
  validateAuditQuery,
  validateRecordsQuery,
} from '../console/service.ts';
import {
  actionResultJson,
  auditPageJson,
  decisionPageJson,
  linkIntentPageJson,
  recordPageGraphqlJson,
  searchJson,
} from '../console/shapes.ts';
import { webhookDeliveryPageJson, webhookEndpointJson } from '../console/webhook-shapes.ts';
import { CONSOLE_ACTION_TYPES, RECORDS_LIMIT_DEFAULT, RECORDS_LIMIT_MAX } from '../schemas/console.ts';
import type { GraphQLContext, SnapshotView } from './context.ts';
import type { LiveConnection } from './live.ts';
import { scalars } from './scalars.ts';

type Args = Record<string, unknown>;

const WEBHOOK_DELIVERIES_DEFAULT = 20;
type WithId = { id: string };
type OfOrganization = { organizationId: string };
type OfGame = { gameId: string };

/** A reference inside one snapshot always resolves; a miss would be a ledger bug, reported as such. */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`snapshot is missing the ${what} it references`);
  return value;
}

const fromSnapshot =
  <P, R>(pick: (view: SnapshotView, parent: P) => R) =>
  async (parent: P, _args: Args, context: GraphQLContext): Promise<R> =>
    pick(await context.snapshot(), parent);

// GraphQL argument names -> the REST records query's parameter names.
const RECORDS_PARAMETERS: Array<[string, string]> = [
  ['organizationId', 'organizationId'],
  ['projectId', 'projectId'],
  ['gameId', 'gameId'],
  ['after', 'cursor'],
  ['first', 'limit'],
];
const ARGUMENT_OF: Record<string, string> = { cursor: 'after', limit: 'first' };

async function records(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeRecordPage();
  // null is "not given" (Relay clients send `after: null` for the first page).
  const query: Record<string, unknown> = { kind: args.kind };
  for (const [argument, parameter] of RECORDS_PARAMETERS) {
    if (args[argument] !== undefined && args[argument] !== null) query[parameter] = args[argument];
  }
  let validated: ReturnType<typeof validateRecordsQuery>;
  try {
    validated = validateRecordsQuery(query, 'records');
  } catch (error) {
    // Same code and rule as REST; the message names the GraphQL argument.
    if (error instanceof Error) {
      error.message = error.message.replace(
        /\brecords\.(cursor|limit)\b/g,
        (_m, p: string) => `records.${ARGUMENT_OF[p]}`,
      );
    }
    throw error;
  }
  const reply = await readRecords(context.transport, context.consolePrincipal, validated, context.call);
  const page = recordPageGraphqlJson(reply);
  return { kind: page.kind, ...connection<object>(page.records, reply.cursors, page.nextCursor) };
}

/** The filters of `auditLog` (GraphQL AuditFilter = REST's query parameters of the same names). */
const AUDIT_FILTERS = ['projectId', 'gameId', 'actor', 'action', 'from', 'to'];

/**
 * auditLog: one page of an organization's audit trail, counted as a record page of the request; REST's rules and
 * codes (400 INVALID_RECORD_QUERY, INVALID_CURSOR; 403 forbidden for a viewer, 404 not_found for a non-member).
 */
async function auditLog(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeRecordPage();
  const query: Record<string, unknown> = { organizationId: args.organizationId };
  const filter = (args.filter ?? {}) as Args;
  for (const name of AUDIT_FILTERS) {
    if (filter[name] !== undefined && filter[name] !== null) query[name] = filter[name];
  }
  if (args.after !== undefined && args.after !== null) query.cursor = args.after;
  if (args.first !== undefined && args.first !== null) query.limit = args.first;
  let validated: ReturnType<typeof validateAuditQuery>;
  try {
    validated = validateAuditQuery(query, 'auditLog');
  } catch (error) {
    // Same code and rule as REST; the message names the GraphQL argument.
    if (error instanceof Error) {
      error.message = error.message
        .replace(/\bauditLog\.(cursor|limit)\b/g, (_m, p: string) => `auditLog.${ARGUMENT_OF[p]}`)
        .replace(/\bauditLog\.(projectId|gameId|actor|action|from|to)\b/g, 'auditLog.filter.$1');
    }
    throw error;
  }
  const reply = await readAudit(context.transport, context.consolePrincipal, validated, context.call);
  const page = auditPageJson(reply);
  return connection<object>(page.records, reply.cursors, page.nextCursor);
}

/** A forward-only Relay connection over one ledger page: one cursor per node, the next page's cursor or null. */
function connection<T>(nodes: readonly T[], cursors: string[], nextCursor: string | null) {
  if (cursors.length !== nodes.length) throw new Error('ledger page without a cursor per record');
  return {
    edges: nodes.map((node, index) => ({ cursor: cursors[index], node })),
    pageInfo: {
      endCursor: cursors.at(-1) ?? null,
      hasNextPage: nextCursor !== null,
      startCursor: cursors[0] ?? null,
      hasPreviousPage: false,
    },
  };
}

/**
 * linkIntents: one page of a game's link intents, counted as a record page of the request. `first` follows the
 * records' rule (1..100, default 50; 400 INVALID_RECORD_QUERY); the ledger checks `after` and the game's visibility.
 */
async function linkIntents(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeRecordPage();
  const first = args.first ?? RECORDS_LIMIT_DEFAULT;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > RECORDS_LIMIT_MAX) {
    throw new AppError('INVALID_RECORD_QUERY', `linkIntents.first must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`);
  }
  const after = typeof args.after === 'string' ? args.after : undefined;
  const reply = await readLinkIntents(
    context.transport,
    context.consolePrincipal,
    { gameId: String(args.gameId), limit: first, ...(after === undefined ? {} : { cursor: after }) },
    context.call,
  );
  const page = linkIntentPageJson(reply);
  return connection(page.intents, reply.cursors, page.nextCursor);
}

/** The arguments of `decisions` that filter (GraphQL name = the ledger request's field, times aside). */
const DECISION_FILTERS = [
  'organizationId',
  'projectId',
  'gameId',
  'playerId',
  'eventId',
  'status',
  'reason',
  'eventType',
];

/**
 * decisions: decision search, one page in either direction, counted as a record page of the request. The records'
 * rules: `first`/`last` 1..100 (default `first: 50`), forward (`first`, `after`) and backward (`last`, `before`)
 * arguments not mixed, malformed filters: 400 INVALID_RECORD_QUERY; the ledger checks the cursor (400 INVALID_CURSOR)
 * and the visibility of the objects the filters name (404 not_found).
 */
async function decisions(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeRecordPage();
  const invalid = (message: string) => new AppError('INVALID_RECORD_QUERY', message);
  // null is "not given", as for records.
  const given = (name: string) => args[name] !== undefined && args[name] !== null;
  const backward = given('last') || given('before');
  if (backward && (given('first') || given('after'))) {
    throw invalid('decisions takes first/after (older decisions) or last/before (newer ones), not both.');
  }
  const sizeArgument = backward ? 'last' : 'first';
  const size = given(sizeArgument) ? args[sizeArgument] : RECORDS_LIMIT_DEFAULT;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > RECORDS_LIMIT_MAX) {
    throw invalid(`decisions.${sizeArgument} must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`);
  }
  const filters: Record<string, string> = {};
  for (const name of DECISION_FILTERS) if (given(name)) filters[name] = String(args[name]);
  const fromMs = given('from') ? Date.parse(String(args.from)) : undefined;
  const toMs = given('to') ? Date.parse(String(args.to)) : undefined;
  const problem = decisionFiltersProblem({ ...filters, fromMs, toMs }, 'decisions');
  if (problem) throw invalid(problem);
  const cursorArgument = backward ? 'before' : 'after';
  const reply = await readDecisions(
    context.transport,
    context.consolePrincipal,
    {
      ...filters,
      ...(fromMs === undefined ? {} : { fromMs: BigInt(fromMs) }),
      ...(toMs === undefined ? {} : { toMs: BigInt(toMs) }),
      ...(given(cursorArgument) ? { cursor: String(args[cursorArgument]) } : {}),
      limit: size,
      backward,
    },
    context.call,
  );
  const page = decisionPageJson(reply);
  if (reply.cursors.length !== page.events.length || reply.externalPlayerIds.length !== page.events.length) {
    throw new Error('ledger page without a cursor and a player per decision');
  }
  return {
    edges: page.events.map((node, index) => ({
      cursor: reply.cursors[index],
      externalPlayerId: reply.externalPlayerIds[index],
      // "" (none stored) and a ledger of the previous version (no metadata at all): null.
      metadata: reply.metadataJson[index] || null,
      node,
    })),
    pageInfo: {
      endCursor: reply.cursors.at(-1) ?? null,
      hasNextPage: page.hasOlder,
      startCursor: reply.cursors[0] ?? null,
      hasPreviousPage: page.hasNewer,
    },
  };
}

const BUCKET_SECONDS: Record<string, number> = { minute: 60, hour: 3_600, day: 86_400 };
/** The most buckets one decisionStats window may hold (the ledger enforces the same bound). */
export const DECISION_STATS_MAX_BUCKETS = 400;

/** decisionStats: one DecisionStats call; every bucket of the window is answered, empty ones with zeros. */
async function decisionStats(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeStatsRead();
  const bucketSeconds = BUCKET_SECONDS[String(args.bucket)] ?? 0;
  const fromMs = Date.parse(String(args.from));
  const toMs = Date.parse(String(args.to));
  if (!(toMs > fromMs)) throw new AppError('INVALID_STATS_QUERY', 'decisionStats.to must be after from.');
  const count = Math.ceil((toMs - fromMs) / (bucketSeconds * 1000));
  if (count > DECISION_STATS_MAX_BUCKETS) {
    throw new AppError(
      'INVALID_STATS_QUERY',
      `decisionStats may span at most ${DECISION_STATS_MAX_BUCKETS} buckets (this window holds ${count} of a ${args.bucket}).`,
    );
  }
  const reply = await readDecisionStats(
    context.transport,
    context.consolePrincipal,
    { gameId: String(args.gameId), fromMs: BigInt(fromMs), toMs: BigInt(toMs), bucketSeconds },
    context.call,
  );
  const buckets = Array.from({ length: count }, (_, index) => ({
    start: new Date(fromMs + index * bucketSeconds * 1000).toISOString(),
    accepted: 0,
    rejected: 0,
    rewardCredits: 0,
    reasons: [] as Array<{ reason: string; count: number }>,
  }));
  for (const row of reply.rows) {
    const bucket = buckets[Math.floor((Number(row.bucketStartMs) - fromMs) / (bucketSeconds * 1000))];
    if (!bucket) throw new Error('ledger stats row outside the window');
    if (row.status === 'accepted') {
      bucket.accepted += row.count;
      bucket.rewardCredits += Number(row.rewardCredits);
    } else {
      bucket.rejected += row.count;
      if (row.reason) bucket.reasons.push({ reason: row.reason, count: row.count });
    }
  }
  return {
    gameId: args.gameId,
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    bucket: args.bucket,
    buckets,
  };
}

function simulationFigures(figures: SimulationFigures | undefined) {
  if (!figures) throw new Error('ledger simulation without figures');
  return {
    accepted: figures.accepted,
    rejected: figures.rejected,
    creditsSpent: Number(figures.credits),
    reasons: figures.reasons.map((r) => ({ reason: r.reason, count: r.count })),
  };
}

function simulationDecision(decision: SimulationDecision | undefined) {
  if (!decision) throw new Error('ledger simulation flip without a decision');
  return { status: decision.status, reason: decision.reason ?? null, rewardCredits: Number(decision.rewardCredits) };
}

/** The most simulateRule fields in one request: each may replay SIMULATE_RULE_MAX_EVENTS decisions. */
export const SIMULATIONS_PER_REQUEST_MAX = 1;
const simulationsOf = new WeakMap<GraphQLContext, number>();

/** simulateRule: the input checked as the ledger checks it, then one SimulateRule call. */
async function simulateRule(_parent: unknown, args: { input: Record<string, unknown> }, context: GraphQLContext) {
  const taken = (simulationsOf.get(context) ?? 0) + 1;
  simulationsOf.set(context, taken);
  if (taken > SIMULATIONS_PER_REQUEST_MAX) {
    throw new AppError('INVALID_REQUEST', `A request may run at most ${SIMULATIONS_PER_REQUEST_MAX} simulateRule.`);
  }
  const input = args.input;
  const query = {
    gameId: String(input.gameId),
    eventType: String(input.eventType),
    rewardCredits: Number(input.rewardCredits),
    dailyPlayerCapCredits: Number(input.dailyPlayerCapCredits),
    fromMs: Date.parse(String(input.from)),
    toMs: Date.parse(String(input.to)),
  };
  const problem = simulationInputProblem(query);
  if (problem) throw new AppError('INVALID_REQUEST', problem);
  const reply = await readRuleSimulation(
    context.transport,
    context.consolePrincipal,
    {
      ...query,
      rewardCredits: BigInt(query.rewardCredits),
      dailyPlayerCapCredits: BigInt(query.dailyPlayerCapCredits),
      active: input.active === true,
      fromMs: BigInt(query.fromMs),
      toMs: BigInt(query.toMs),
    },
    context.call,
  );
  return {
    gameId: query.gameId,
    from: new Date(query.fromMs).toISOString(),
    to: new Date(query.toMs).toISOString(),
    considered: reply.considered,
    spentBeforeCredits: Number(reply.spentBeforeCredits),
    stored: simulationFigures(reply.stored),
    proposed: simulationFigures(reply.proposed),
    days: reply.days.map((day) => ({
      day: new Date(Date.parse(`${day.day}T00:00:00Z`)).toISOString(),
      // Days carry no reasons (SimulationDayFigures).
      stored: simulationFigures(day.stored),
      proposed: simulationFigures(day.proposed),
    })),
    flipCount: reply.flipCount,
    flips: reply.flips.map((flip) => ({
      id: flip.id,
      eventId: flip.eventId,
      playerId: flip.playerId,
      eventType: flip.eventType,
      createdAt: new Date(Number(flip.createdAtMs)).toISOString(),
      stored: simulationDecision(flip.stored),
      proposed: simulationDecision(flip.proposed),
    })),
  };
}

/**
 * search: the console's search box, counted as a record page of the request. The ledger finds ids; the console
 * objects they name are the request's snapshot's (an object created between the two reads is left out).
 */
async function search(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeRecordPage();
  const text = String(args.text).trim();
  if (text.length < 1 || text.length > SEARCH_TEXT_MAX) {
    throw new AppError('INVALID_RECORD_QUERY', `search.text must be 1 to ${SEARCH_TEXT_MAX} characters once trimmed.`);
  }
  // No id, key prefix or name holds a control character (the ledger's checks refuse them), and PostgreSQL text
  // cannot hold NUL: such a text finds nothing and is refused before it reaches the database.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is refused.
  if (/[\u0000-\u001f\u007f]/.test(text)) {
    throw new AppError(
      'INVALID_RECORD_QUERY',
      'search.text must not contain control characters (U+0000-U+001F, U+007F).',
    );
  }
  const found = searchJson(await readSearch(context.transport, context.consolePrincipal, text, context.call));
  const view = await context.snapshot();
  const keys = new Map(view.json.keys.map((k) => [k.id, k]));
  const known = <T>(ids: string[], of: Map<string, T>) => ids.flatMap((id) => of.get(id) ?? []);
  return {
    text,
    organizations: known(found.organizationIds, view.organizations),
    projects: known(found.projectIds, view.projects),
    games: known(found.gameIds, view.games),
    keys: found.keys.flatMap(({ keyId, ...use }) => {
      const key = keys.get(keyId);
      return key ? [{ key, ...use }] : [];
    }),
    players: found.players,
    decisions: found.decisions,
  };
}

/** webhookEndpoints: a game's endpoints, one ledger call (the ledger checks the game's visibility). */
async function webhookEndpoints(_parent: unknown, args: Args, context: GraphQLContext) {
  const reply = await readWebhookEndpoints(
    context.transport,
    context.consolePrincipal,
    { gameId: String(args.gameId) },
    context.call,
  );
  return reply.endpoints.map(webhookEndpointJson);
}

/** webhookDeliveries: one page of an endpoint's deliveries, counted as a record page of the request. */
async function webhookDeliveries(_parent: unknown, args: Args, context: GraphQLContext) {
  context.takeRecordPage();
  const first = args.first ?? WEBHOOK_DELIVERIES_DEFAULT;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > RECORDS_LIMIT_MAX) {
    throw new AppError(
      'INVALID_RECORD_QUERY',
      `webhookDeliveries.first must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`,
    );
  }
  const after = typeof args.after === 'string' ? args.after : undefined;
  // The values are checked by the ledger (400 INVALID_RECORD_QUERY); the instants are DateTime scalars already.
  const filter = (args.filter ?? {}) as Args;
  const given = (name: string) => (typeof filter[name] === 'string' ? (filter[name] as string) : undefined);
  const from = given('from');
  const to = given('to');
  const reply = await readWebhookDeliveries(
    context.transport,
    context.consolePrincipal,
    {
      webhookEndpointId: String(args.webhookEndpointId),
      limit: first,
      ...(after === undefined ? {} : { cursor: after }),
      ...(given('state') === undefined ? {} : { state: given('state') }),
      ...(given('eventType') === undefined ? {} : { eventType: given('eventType') }),
      ...(from === undefined ? {} : { fromMicros: epochMicros(from) }),
      ...(to === undefined ? {} : { toMicros: epochMicros(to) }),
      ...(given('webhookId') === undefined ? {} : { webhookId: given('webhookId') }),
    },
    context.call,
  );
  return webhookDeliveryPageJson(reply);
}

/** One mutation per console action: the REST body `{ type, ...input }`, the same validator, the same call. */
function actionResolver(type: string) {
  return async (_parent: unknown, args: { input: Record<string, unknown> }, context: GraphQLContext) => {
    const principal = await context.admitForAction();
    const body = validateAction({ type, ...args.input }, 'input');
    const reply = await runAction(context.transport, principal, body, context.call);
    const result = actionResultJson(reply);
    return { issuedKey: null, kind: null, secret: null, ...result };
  };
}

export const resolvers = {
  ...scalars,
  Query: {
    access: (_parent: unknown, _args: Args, context: GraphQLContext) => ({
      authorized: true,
      email: context.principal.email,
      mode: 'sandbox',
    }),
    snapshot: fromSnapshot((view) => view.json),
    records,
    decisions,
    linkIntents,
    auditLog,
    decisionStats,
    simulateRule,
    search,
    webhookEndpoints,
    webhookDeliveries,
  },
  Subscription: {
    decisions: {
      // Over WebSocket only (live.ts); POST /graphql refuses subscriptions before any resolver runs (server.ts).
      subscribe: (_parent: unknown, args: Args, context: { live?: LiveConnection }) => {
        if (!context.live) throw new AppError('INVALID_REQUEST', 'Subscriptions run over WebSocket.');
        return context.live.decisions(String(args.gameId));
      },
      resolve: (event: unknown) => event,
    },
  },
  Mutation: Object.fromEntries(CONSOLE_ACTION_TYPES.map((type) => [type, actionResolver(type)])),
  DeveloperOrganization: {
    projects: fromSnapshot((view, o: WithId) => view.projectsByOrganization.get(o.id) ?? []),
    games: fromSnapshot((view, o: WithId) => view.gamesByOrganization.get(o.id) ?? []),
    keys: fromSnapshot((view, o: WithId) => view.keysByOrganization.get(o.id) ?? []),
    rules: fromSnapshot((view, o: WithId) => view.rulesByOrganization.get(o.id) ?? []),
    members: fromSnapshot((view, o: WithId) => view.membersByOrganization.get(o.id) ?? []),
  },
  DeveloperProject: {
    organization: fromSnapshot((view, p: OfOrganization) =>
      need(view.organizations.get(p.organizationId), 'organization'),
    ),
    games: fromSnapshot((view, p: WithId) => view.gamesByProject.get(p.id) ?? []),
  },
  DeveloperGame: {
    organization: fromSnapshot((view, g: OfOrganization) =>
      need(view.organizations.get(g.organizationId), 'organization'),
    ),
    project: fromSnapshot((view, g: { projectId: string }) => need(view.projects.get(g.projectId), 'project')),
    keys: fromSnapshot((view, g: WithId) => view.keysByGame.get(g.id) ?? []),
    rules: fromSnapshot((view, g: WithId) => view.rulesByGame.get(g.id) ?? []),
  },
  DeveloperKey: {
    game: fromSnapshot((view, k: OfGame) => need(view.games.get(k.gameId), 'game')),
  },
  DeveloperRule: {
    game: fromSnapshot((view, r: OfGame) => need(view.games.get(r.gameId), 'game')),
  },
  DeveloperMember: {
    email: async (m: { identityUserId: string; joined: boolean }, _args: unknown, context: GraphQLContext) =>
      m.joined ? ((await context.memberEmails()).get(m.identityUserId) ?? null) : null,
    organization: fromSnapshot((view, m: OfOrganization) =>
      need(view.organizations.get(m.organizationId), 'organization'),
    ),
  },
  DeveloperRecord: {
    __resolveType: (record: object) => ('eventId' in record ? 'DeveloperEvent' : 'DeveloperPlayer'),
  },
};
