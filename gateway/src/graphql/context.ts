// The per-request context of the GraphQL console: the admitted developer, and the request's one snapshot.
//
// Batched loading: every organization, project, game, key, rule and member a request can reach comes from the
// ledger's GetSnapshot, loaded at most once per request and indexed by id and parent, so that nested fields
// (organization.projects, game.rules, rule.game, ...) never make a NATS request per item: a query of any shape
// costs one GetSnapshot, plus one ListRecords per `records` field and one ConsoleAction per mutation.
import type Koa from 'koa';
import type { DeveloperPrincipal } from '#runtime/contracts/gen/rewards/v1/identity_pb.ts';
import { identityOps } from '#runtime/contracts/operations.ts';
import { AppError } from '#runtime/errors.ts';
import type { CallContext, Transport } from '#runtime/transport/operation.ts';
import { type DeveloperLease, TooManyRequestsError } from '../auth/developer-limits.ts';
import { admitDeveloper, setRateLimitFields } from '../auth/developer-session.ts';
import { consolePrincipal, readSnapshot } from '../console/service.ts';
import { consoleSnapshotJson } from '../console/shapes.ts';

/** The snapshot as GraphQL reads it: the REST snapshot's objects and GraphQL's own fields (`joined`). */
export type SnapshotJson = ReturnType<typeof consoleSnapshotJson>;
type Organization = SnapshotJson['organizations'][number];
type Project = SnapshotJson['projects'][number];
type Game = SnapshotJson['games'][number];
type Key = SnapshotJson['keys'][number];
type Rule = SnapshotJson['rules'][number];
type Member = SnapshotJson['members'][number];

/** The snapshot's lists, and the same objects indexed by id and by parent. */
export interface SnapshotView {
  json: SnapshotJson;
  organizations: Map<string, Organization>;
  projects: Map<string, Project>;
  games: Map<string, Game>;
  projectsByOrganization: Map<string, Project[]>;
  gamesByOrganization: Map<string, Game[]>;
  gamesByProject: Map<string, Game[]>;
  keysByOrganization: Map<string, Key[]>;
  keysByGame: Map<string, Key[]>;
  rulesByOrganization: Map<string, Rule[]>;
  rulesByGame: Map<string, Rule[]>;
  membersByOrganization: Map<string, Member[]>;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

export function indexSnapshot(json: SnapshotJson): SnapshotView {
  return {
    json,
    organizations: new Map(json.organizations.map((o) => [o.id, o])),
    projects: new Map(json.projects.map((p) => [p.id, p])),
    games: new Map(json.games.map((g) => [g.id, g])),
    // Lists keep the snapshot's order (oldest first).
    projectsByOrganization: groupBy(json.projects, (p) => p.organizationId),
    gamesByOrganization: groupBy(json.games, (g) => g.organizationId),
    gamesByProject: groupBy(json.games, (g) => g.projectId),
    keysByOrganization: groupBy(json.keys, (k) => k.organizationId),
    keysByGame: groupBy(json.keys, (k) => k.gameId),
    rulesByOrganization: groupBy(json.rules, (r) => r.organizationId),
    rulesByGame: groupBy(json.rules, (r) => r.gameId),
    membersByOrganization: groupBy(json.members, (m) => m.organizationId),
  };
}

/** At most this many `records` fields (ListRecords calls) in one request: `first` given as a variable escapes the
 * cost limit's multiplier, this bound does not. */
export const RECORD_PAGES_PER_REQUEST_MAX = 5;

export class GraphQLContext {
  readonly transport: Transport;
  readonly call: CallContext;
  /** The developer admitted for this request (before the body was read, as over REST). */
  readonly principal: DeveloperPrincipal;
  /** The request's hold on its developer's limits (auth/developer-limits.ts). */
  readonly lease: DeveloperLease;
  private readonly koa: Koa.Context;
  private requestAdmissionUnused = true;
  private snapshotView: Promise<SnapshotView> | undefined;
  private memberEmailsRead: Promise<Map<string, string>> | undefined;
  private recordPages = 0;
  private statsReads = 0;

  constructor(transport: Transport, koa: Koa.Context, principal: DeveloperPrincipal, lease: DeveloperLease) {
    this.transport = transport;
    this.koa = koa;
    this.call = koa.state.call;
    this.principal = principal;
    this.lease = lease;
  }

  /**
   * The operation's cost beyond what admission took (its expensive fields), and a dry-run slot when it runs
   * simulateRule: 429 TOO_MANY_REQUESTS, with the RateLimit fields and Retry-After, when the developer has not got
   * them (answered after the refusal's hold, developer-limits.ts). Charged once the operation is known, before any
   * field runs.
   */
  async chargeOperation(extraCost: number, simulation: boolean): Promise<void> {
    try {
      if (simulation) this.lease.takeSimulation();
      this.lease.charge(extraCost);
    } catch (error) {
      if (error instanceof TooManyRequestsError) {
        setRateLimitFields(this.koa, error.fields, error.retryAfterSeconds);
        await error.held();
      }
      throw error;
    }
    setRateLimitFields(this.koa, this.lease.fields());
  }

  /** The ledger's view of the request's developer. */
  get consolePrincipal() {
    return consolePrincipal(this.principal);
  }

  /** The request's snapshot: one GetSnapshot, shared by every field that needs it. */
  snapshot(): Promise<SnapshotView> {
    this.snapshotView ??= readSnapshot(this.transport, this.consolePrincipal, this.call).then((reply) =>
      indexSnapshot(consoleSnapshotJson(reply)),
    );
    return this.snapshotView;
  }

  /**
   * The e-mails of the joined members of the caller's organizations (the snapshot's members), one DeveloperEmails
   * call per request however many members are asked for. A member an owner added is asked about only once it
   * accepted (docs/identity.md, "Member e-mails"): an identity id someone typed never yields an e-mail, so the
   * answer does not tell whether the id is a developer's. When identity-admission cannot answer, the e-mails are
   * unknown (null) rather than the whole snapshot failing.
   */
  memberEmails(): Promise<Map<string, string>> {
    this.memberEmailsRead ??= this.snapshot().then(async (view) => {
      const joined = view.json.members.filter((m) => m.joined);
      const ids = [...new Set(joined.map((m) => m.identityUserId))];
      if (ids.length === 0) return new Map<string, string>();
      try {
        const reply = await this.transport.call(identityOps.developerEmails, { identityUserIds: ids }, this.call);
        return new Map(reply.emails.map((e) => [e.identityUserId, e.email]));
      } catch {
        return new Map<string, string>();
      }
    });
    return this.memberEmailsRead;
  }

  /**
   * The principal a mutation acts for. The invitation is rechecked before every action, as over REST: the first
   * mutation of a request uses the request's admission, made just before; each further one is admitted again.
   */
  async admitForAction(): Promise<ReturnType<typeof consolePrincipal>> {
    if (this.requestAdmissionUnused) {
      this.requestAdmissionUnused = false;
      return this.consolePrincipal;
    }
    return consolePrincipal(await admitDeveloper(this.transport, this.koa));
  }

  /** Counts a `decisionStats` field; past RECORD_PAGES_PER_REQUEST_MAX, 400 INVALID_REQUEST (no ledger call). */
  takeStatsRead(): void {
    this.statsReads += 1;
    if (this.statsReads > RECORD_PAGES_PER_REQUEST_MAX) {
      throw new AppError(
        'INVALID_REQUEST',
        `A request may read at most ${RECORD_PAGES_PER_REQUEST_MAX} decisionStats; split it.`,
      );
    }
  }

  /** Counts a `records` field; past the bound, 400 INVALID_REQUEST (no ledger call). */
  takeRecordPage(): void {
    this.recordPages += 1;
    if (this.recordPages > RECORD_PAGES_PER_REQUEST_MAX) {
      throw new AppError(
        'INVALID_REQUEST',
        `A request may read at most ${RECORD_PAGES_PER_REQUEST_MAX} record pages; split it.`,
      );
    }
  }
}
