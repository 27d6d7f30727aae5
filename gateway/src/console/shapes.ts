// Translation between the console's JSON shapes (spec: Resources) and the ledger's protobuf messages. Credits are
// int64 (bigint) on the transport and JSON numbers at the edge; optional fields become null. Shared by the REST
// adapter and any other edge of the same console (GraphQL).

import type { MessageInitShape } from '@bufbuild/protobuf';
import { eventRecordJson } from '#runtime/contracts/event-record.ts';
import type {
  AuditEntry,
  ConsoleActionRequestSchema,
  ConsoleActionResponse,
  DeveloperEvent,
  DeveloperGame,
  DeveloperKey,
  DeveloperLinkIntent,
  DeveloperMember,
  DeveloperOrganization,
  DeveloperPlayer,
  DeveloperProject,
  DeveloperRule,
  GetSnapshotResponse,
  ListAuditEntriesResponse,
  ListDecisionsResponse,
  ListLinkIntentsResponse,
  ListRecordsResponse,
  SearchConsoleResponse,
} from '#runtime/contracts/gen/rewards/v1/console_pb.ts';

type ActionInit = MessageInitShape<typeof ConsoleActionRequestSchema>['action'];

/**
 * A validated action body to the message's `oneof`: the action's `type` is the oneof case, its other fields the
 * case's message (same names); every `...Credits` field is an int64.
 */
export function actionMessage(body: Record<string, unknown>): ActionInit {
  const { type, ...fields } = body;
  const value: Record<string, unknown> = {};
  for (const [field, fieldValue] of Object.entries(fields)) {
    value[field] = field.endsWith('Credits') && typeof fieldValue === 'number' ? BigInt(fieldValue) : fieldValue;
  }
  return { case: type, value } as ActionInit;
}

const n = (value: bigint) => Number(value);
const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export function actionResultJson(reply: ConsoleActionResponse) {
  return {
    id: reply.id,
    mode: 'sandbox' as const,
    ...(reply.issuedKey === undefined ? {} : { issuedKey: reply.issuedKey }),
    ...(reply.kind === undefined ? {} : { kind: reply.kind }),
    ...(reply.secret === undefined ? {} : { secret: reply.secret }),
  };
}

export const organizationJson = (o: DeveloperOrganization) => ({
  id: o.id,
  name: o.name,
  unlimitedFunding: o.unlimitedFunding,
  balanceCredits: n(o.balanceCredits),
  role: o.role,
  createdAt: o.createdAt,
});

export const projectJson = (p: DeveloperProject) => ({
  id: p.id,
  organizationId: p.organizationId,
  name: p.name,
  maxPayoutCredits: n(p.maxPayoutCredits),
  budgetCredits: n(p.budgetCredits),
  spentCredits: n(p.spentCredits),
  createdAt: p.createdAt,
});

export const gameJson = (g: DeveloperGame) => ({
  id: g.id,
  projectId: g.projectId,
  organizationId: g.organizationId,
  name: g.name,
  platform: g.platform,
  status: g.status,
  maxPayoutCredits: n(g.maxPayoutCredits),
  budgetCredits: n(g.budgetCredits),
  spentCredits: n(g.spentCredits),
  dailyPlayerCapCredits: n(g.dailyPlayerCapCredits),
  createdAt: g.createdAt,
});

export const keyJson = (k: DeveloperKey) => ({
  id: k.id,
  gameId: k.gameId,
  organizationId: k.organizationId,
  kind: k.kind,
  name: k.name,
  prefix: k.prefix,
  publicKey: k.kind === 'public' ? orNull(k.publicKey) : null,
  createdAt: k.createdAt,
  revokedAt: orNull(k.revokedAt),
});

export const memberJson = (m: DeveloperMember) => ({
  id: m.id,
  organizationId: m.organizationId,
  identityUserId: m.identityUserId,
  role: m.role,
  createdAt: m.createdAt,
});

export const ruleJson = (r: DeveloperRule) => ({
  id: r.id,
  gameId: r.gameId,
  organizationId: r.organizationId,
  eventType: r.eventType,
  rewardCredits: n(r.rewardCredits),
  active: r.active,
  createdAt: r.createdAt,
});

export const playerJson = (p: DeveloperPlayer) => ({
  id: p.id,
  gameId: p.gameId,
  organizationId: p.organizationId,
  externalPlayerId: p.externalPlayerId,
  creditsUserId: orNull(p.creditsUserId),
  username: orNull(p.username),
  linkedAt: orNull(p.linkedAt),
  createdAt: p.createdAt,
});

/** The event record (DeveloperEvent): the runtime's one mapping, shared with the game SDK's GameEventResult. */
export const eventJson = (e: DeveloperEvent) => eventRecordJson(e);

/**
 * What GraphQL, the decision export and webhook payloads add to a decision (CONTRACT section 11.2): `gameTime`, the
 * game's clock when it was decided (a ledger of the previous release sends none: its clocks were never advanced).
 */
export const eventGraphqlJson = (e: DeveloperEvent) => ({ ...eventJson(e), gameTime: e.gameTime || e.createdAt });

/** GraphQL's game: the REST game and its clock (`now`: real time plus the seconds it was advanced). */
export const gameGraphqlJson = (g: DeveloperGame) => ({
  ...gameJson(g),
  clock: {
    now: new Date(Date.now() + Number(g.clockAdvancedSeconds) * 1000).toISOString(),
    advancedSeconds: n(g.clockAdvancedSeconds),
  },
});

/** GraphQL's player: the REST player and whether createTestPlayer made it. */
export const playerGraphqlJson = (p: DeveloperPlayer) => ({ ...playerJson(p), test: p.test });

/** The REST snapshot (DeveloperSnapshot): exactly the document's fields, nothing added (CONTRACT section 11.2). */
export function snapshotJson(s: GetSnapshotResponse) {
  return {
    mode: 'sandbox' as const,
    unitsPerDollar: 1000,
    canCreateUnlimitedOrganization: s.canCreateUnlimitedOrganization,
    organizations: s.organizations.map(organizationJson),
    projects: s.projects.map(projectJson),
    games: s.games.map(gameJson),
    keys: s.keys.map(keyJson),
    players: s.players.map(playerJson),
    events: s.events.map(eventJson),
    rules: s.rules.map(ruleJson),
    members: s.members.map(memberJson),
    limits: { players: s.limits?.players ?? 0, events: s.limits?.events ?? 0 },
  };
}

/**
 * The snapshot GraphQL reads: the REST snapshot's objects plus the fields only GraphQL serves (an organization's and a
 * member's `joined`). The REST shapes stay the document's; what goes beyond it is read here.
 */
export function consoleSnapshotJson(s: GetSnapshotResponse) {
  const rest = snapshotJson(s);
  return {
    ...rest,
    organizations: s.organizations.map((o) => ({ ...organizationJson(o), joined: o.joined })),
    members: s.members.map((m) => ({ ...memberJson(m), joined: m.joined })),
    games: s.games.map(gameGraphqlJson),
    players: s.players.map(playerGraphqlJson),
    events: s.events.map(eventGraphqlJson),
  };
}

/** An audit entry as CONTRACT section 11.2 shows it (absent values null; entries before 0018 have fewer). */
export const auditEntryJson = (e: AuditEntry) => ({
  id: e.id,
  organizationId: e.organizationId,
  projectId: orNull(e.projectId),
  gameId: orNull(e.gameId),
  actor: { identityUserId: e.actor?.identityUserId ?? '', email: orNull(e.actor?.email) },
  action: e.action,
  targetKind: orNull(e.targetKind),
  targetId: e.targetId,
  changes: JSON.parse(e.changesJson) as Record<string, { from: unknown; to: unknown }>,
  requestId: orNull(e.requestId),
  createdAt: e.createdAt,
});

export function auditPageJson(page: ListAuditEntriesResponse) {
  return { records: page.entries.map(auditEntryJson), nextCursor: orNull(page.nextCursor) };
}

export function recordPageJson(page: ListRecordsResponse) {
  return {
    kind: page.kind,
    records: page.kind === 'events' ? page.events.map(eventJson) : page.players.map(playerJson),
    nextCursor: orNull(page.nextCursor),
  };
}

/** A records page as GraphQL serves it (decisions with gameTime, players with test). */
export function recordPageGraphqlJson(page: ListRecordsResponse) {
  return {
    kind: page.kind,
    records: page.kind === 'events' ? page.events.map(eventGraphqlJson) : page.players.map(playerGraphqlJson),
    nextCursor: orNull(page.nextCursor),
  };
}

/** A link intent as the console shows it: its state and times, never its token. */
export const linkIntentJson = (i: DeveloperLinkIntent) => ({
  id: i.id,
  gameId: i.gameId,
  organizationId: i.organizationId,
  playerId: i.playerId,
  externalPlayerId: i.externalPlayerId,
  state: i.state,
  createdAt: i.createdAt,
  expiresAt: i.expiresAt,
  consumedAt: orNull(i.consumedAt),
});

export function linkIntentPageJson(page: ListLinkIntentsResponse) {
  return { intents: page.intents.map(linkIntentJson), nextCursor: orNull(page.nextCursor) };
}

/** A decision-search page: the decisions newest first, as the records show them. */
export function decisionPageJson(page: ListDecisionsResponse) {
  return { events: page.events.map(eventGraphqlJson), hasOlder: page.hasOlder, hasNewer: page.hasNewer };
}

/** What the search box found: ids of the console objects (served from the snapshot), players and decisions whole. */
export function searchJson(found: SearchConsoleResponse) {
  return {
    organizationIds: found.organizationIds,
    projectIds: found.projectIds,
    gameIds: found.gameIds,
    keys: found.keys.map((k) => ({
      keyId: k.keyId,
      decisionsToday: k.decisionsToday,
      lastUsedToday: orNull(k.lastUsedTodayAt),
    })),
    players: found.players.flatMap((p) =>
      p.player
        ? [
            {
              player: playerGraphqlJson(p.player),
              rewardedTodayCredits: n(p.rewardedTodayCredits),
              rewardedCredits: n(p.rewardedCredits),
            },
          ]
        : [],
    ),
    decisions: found.decisions.map(eventGraphqlJson),
  };
}
