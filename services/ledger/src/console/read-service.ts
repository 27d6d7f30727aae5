// The console's read service: it checks a read's query (filters, cursors, windows, the caller's membership) and
// decides what to read for the snapshot (GET /api/developer/v1/console), the records pages (GET
// /api/developer/v1/records; CONTRACT section 8), the decision search, stats and export; the SQL is in
// read-repository.ts.
import { type KeyObject, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '#runtime/clock.ts';
import { SEARCH_TEXT_MAX } from '#runtime/contracts/console-search.ts';
import {
  DECISION_EXPORT_PAGE_MAX,
  type DecisionSearchFilters,
  decisionExportProblem,
  decisionFiltersProblem,
  decisionSearchScope,
} from '#runtime/contracts/decision-search.ts';
import { AppError } from '#runtime/errors.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import {
  type CursorPosition,
  cursorKey,
  decodeCursor,
  encodeCursor,
  type RecordKind,
} from '../domain/records-cursor.ts';
import { type AuditEntryRow, readAuditEntries } from './audit-repository.ts';
import {
  canSee,
  type DecisionStatsRow,
  type EventRecord,
  type LinkIntent,
  type Player,
  readDecisionStats,
  readDecisions,
  readLinkIntents,
  readRecords,
  readSnapshot,
  type SnapshotLists,
} from './read-repository.ts';
import { readSearch, type SearchRows } from './search-repository.ts';
import type { ConsoleRepository, Role } from './write-repository.ts';

/** Global snapshot limits across the caller's organizations (spec: Limits). */
export const SNAPSHOT_LIMITS = { players: 500, events: 200 } as const;
export const RECORDS_LIMIT_MAX = 100;
export const RECORDS_LIMIT_DEFAULT = 50;

export interface RecordsRequest {
  identityUserId: string;
  kind: string;
  organizationId?: string | undefined;
  projectId?: string | undefined;
  gameId?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

export interface RecordsPage {
  kind: RecordKind;
  players: Player[];
  events: EventRecord[];
  nextCursor: string | undefined;
  /** The cursor right after each returned record (GraphQL edge cursors); the last one equals nextCursor when set. */
  cursors: string[];
}

export interface LinkIntentsPage {
  intents: LinkIntent[];
  nextCursor: string | undefined;
  /** The cursor right after each returned intent; the last one equals nextCursor when set. */
  cursors: string[];
}

export interface DecisionsRequest extends DecisionSearchFilters {
  identityUserId: string;
  cursor?: string | undefined;
  limit: number;
  /** False: the decisions right after the cursor (older); true: right before it (newer). */
  backward: boolean;
}

export interface DecisionsPage {
  /** Newest first. */
  events: EventRecord[];
  /** Each decision's player's externalPlayerId. */
  externalPlayerIds: string[];
  /** Each decision's event metadata (canonical JSON text); "" when none was stored. */
  metadataJson: string[];
  /** Each decision's cursor, bound to the filters. */
  cursors: string[];
  hasOlder: boolean;
  hasNewer: boolean;
}

export interface DecisionExportRequest extends DecisionSearchFilters {
  identityUserId: string;
  gameId: string;
  fromMs: number;
  toMs: number;
  cursor?: string | undefined;
  limit: number;
}

export interface DecisionExportPage {
  /** Oldest first. */
  events: EventRecord[];
  /** Each decision's player's externalPlayerId. */
  externalPlayerIds: string[];
  /** Set when more decisions match: the cursor of the page's last decision. */
  nextCursor: string | undefined;
}

/** A decision search's (or export's) filters as the reads take them. */
export function decisionFiltersOf(r: DecisionSearchFilters & { identityUserId: string }) {
  return {
    identityUserId: r.identityUserId,
    organizationId: r.organizationId,
    projectId: r.projectId,
    gameId: r.gameId,
    playerId: r.playerId,
    eventId: r.eventId,
    status: r.status,
    reason: r.reason,
    eventType: r.eventType,
    from: r.fromMs === undefined ? undefined : new Date(r.fromMs),
    to: r.toMs === undefined ? undefined : new Date(r.toMs),
  };
}

const invalidQuery = (message: string) => new AppError('INVALID_RECORD_QUERY', message);
const invalidCursor = () =>
  new AppError('INVALID_CURSOR', 'The cursor is not one this endpoint issued for this kind and these filters.');

/** The filters a cursor is bound to, in one canonical spelling. */
export function cursorScope(r: { organizationId?: string; projectId?: string; gameId?: string }): string {
  const part = (value: string | undefined) => (value ?? '').toLowerCase();
  return `org=${part(r.organizationId)};project=${part(r.projectId)};game=${part(r.gameId)}`;
}

/** The most buckets one decisionStats window may hold. */
export const DECISION_STATS_MAX_BUCKETS = 400;

export class ConsoleQueries {
  private readonly repository: ConsoleRepository;
  /** The time link intents are read at (their state: pending or expired). */
  private readonly clock: Clock;
  private cursorKey: Promise<KeyObject> | undefined;

  constructor(repository: ConsoleRepository, clock: Clock) {
    this.repository = repository;
    this.clock = clock;
  }

  async snapshot(identityUserId: string): Promise<SnapshotLists> {
    return this.repository.read((em) => readSnapshot(em, identityUserId, SNAPSHOT_LIMITS));
  }

  private key(): Promise<KeyObject> {
    this.cursorKey ??= this.repository.cursorKey(randomBytes(32)).then(cursorKey, (error: unknown) => {
      this.cursorKey = undefined;
      throw error;
    });
    return this.cursorKey;
  }

  /** Decisions of one game per bucket (the console's charts); the window is bounded by DECISION_STATS_MAX_BUCKETS. */
  async decisionStats(r: {
    identityUserId: string;
    gameId: string;
    fromMs: number;
    toMs: number;
    bucketSeconds: number;
  }): Promise<DecisionStatsRow[]> {
    const invalid = (message: string) => new AppError('INVALID_STATS_QUERY', message);
    if (!isUuid(r.gameId)) throw invalid('gameId must be a valid uuid.');
    if (!Number.isInteger(r.bucketSeconds) || r.bucketSeconds < 60) throw invalid('bucket must be at least a minute.');
    if (!Number.isFinite(r.fromMs) || !Number.isFinite(r.toMs) || r.toMs <= r.fromMs) {
      throw invalid('to must be after from.');
    }
    if ((r.toMs - r.fromMs) / (r.bucketSeconds * 1000) > DECISION_STATS_MAX_BUCKETS) {
      throw invalid(`The window may span at most ${DECISION_STATS_MAX_BUCKETS} buckets.`);
    }
    return this.repository.read(async (em) => {
      if (!(await canSee(em, r.identityUserId, 'games', r.gameId))) {
        throw new AppError('not_found', 'No such object in an organization you are a member of.');
      }
      return readDecisionStats(em, {
        gameId: r.gameId,
        from: new Date(r.fromMs),
        to: new Date(r.toMs),
        bucketSeconds: r.bucketSeconds,
      });
    });
  }

  /**
   * The console's search box: what the text finds in the caller's organizations (search-repository.ts). A text of
   * 1..SEARCH_TEXT_MAX characters once trimmed, else 400 INVALID_RECORD_QUERY; the day of the figures is the
   * clock's UTC day.
   */
  async search(r: { identityUserId: string; text: string }): Promise<SearchRows> {
    const text = r.text.trim();
    if (text.length < 1 || text.length > SEARCH_TEXT_MAX) {
      throw invalidQuery(`search text must be 1 to ${SEARCH_TEXT_MAX} characters once trimmed.`);
    }
    return this.repository.read((em) =>
      readSearch(em, { identityUserId: r.identityUserId, text, uuid: isUuid(text) }, this.clock.now()),
    );
  }

  /**
   * One page of a game's link intents, newest first (GraphQL linkIntents). The game must be visible to the caller
   * (404 not_found otherwise, like a records filter); limit and cursor follow the records' rules and codes.
   */
  async linkIntents(r: {
    identityUserId: string;
    gameId: string;
    cursor?: string | undefined;
    limit: number;
  }): Promise<LinkIntentsPage> {
    if (!Number.isInteger(r.limit) || r.limit < 1 || r.limit > RECORDS_LIMIT_MAX) {
      throw invalidQuery(`limit must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`);
    }
    if (!isUuid(r.gameId)) throw invalidQuery('gameId must be a valid uuid.');
    const context = { kind: 'link_intents' as const, scope: cursorScope({ gameId: r.gameId }) };
    let after: CursorPosition | undefined;
    if (r.cursor !== undefined) {
      const decoded = decodeCursor(await this.key(), r.cursor, context);
      if ('error' in decoded) throw invalidCursor();
      after = decoded;
    }
    const rows = await this.repository.read(async (em) => {
      if (!(await canSee(em, r.identityUserId, 'games', r.gameId))) {
        throw new AppError('not_found', 'No such object in an organization you are a member of.');
      }
      return readLinkIntents(em, { gameId: r.gameId, after, take: r.limit + 1, now: this.clock.now() });
    });
    const key = await this.key();
    const cursors = rows.positions.slice(0, r.limit).map((position) => encodeCursor(key, { ...context, ...position }));
    return {
      intents: rows.intents.slice(0, r.limit),
      nextCursor: rows.positions.length > r.limit ? cursors.at(-1) : undefined,
      cursors,
    };
  }

  /**
   * Decision search (GraphQL decisions): one page of the decisions of the caller's organizations matching every
   * filter, newest first, in either direction from an edge cursor. The records' rules: limit 1..100 and malformed
   * filters 400 INVALID_RECORD_QUERY, a cursor altered or bound to other filters 400 INVALID_CURSOR, a filter naming
   * an organization, project, game or player the caller cannot see 404 not_found (checked on each page).
   */
  async decisions(r: DecisionsRequest): Promise<DecisionsPage> {
    if (!Number.isInteger(r.limit) || r.limit < 1 || r.limit > RECORDS_LIMIT_MAX) {
      throw invalidQuery(`limit must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`);
    }
    const problem = decisionFiltersProblem(r, 'decisions');
    if (problem) throw invalidQuery(problem);
    const context = { kind: 'decisions' as const, scope: decisionSearchScope(r) };
    let cursor: CursorPosition | undefined;
    if (r.cursor !== undefined) {
      const decoded = decodeCursor(await this.key(), r.cursor, context);
      if ('error' in decoded) throw invalidCursor();
      cursor = decoded;
    }
    const older = !r.backward;
    const rows = await this.repository.read(async (em) => {
      await this.checkVisible(em, r);
      return readDecisions(em, { ...decisionFiltersOf(r), cursor, older, take: r.limit + 1 });
    });
    const more = rows.positions.length > r.limit;
    const key = await this.key();
    let events = rows.events.slice(0, r.limit);
    let externalPlayerIds = rows.externalPlayerIds.slice(0, r.limit);
    let metadataJson = rows.metadataJson.slice(0, r.limit);
    let cursors = rows.positions.slice(0, r.limit).map((position) => encodeCursor(key, { ...context, ...position }));
    // Going newer the rows come oldest first: the page is answered newest first either way.
    if (!older) {
      events = events.reverse();
      externalPlayerIds = externalPlayerIds.reverse();
      metadataJson = metadataJson.reverse();
      cursors = cursors.reverse();
    }
    return {
      events,
      externalPlayerIds,
      metadataJson,
      cursors,
      hasOlder: older ? more : rows.beyondCursor,
      hasNewer: older ? rows.beyondCursor : more,
    };
  }

  /**
   * Decision export (GET /api/developer/v1/decisions/export): one page of a game's decisions in a window of at most
   * 31 days matching every filter, oldest first, continuing after the previous page's cursor. The decision search's
   * rules and codes; visibility is checked again on each page (membership may end mid-export).
   */
  async exportDecisions(r: DecisionExportRequest): Promise<DecisionExportPage> {
    if (!Number.isInteger(r.limit) || r.limit < 1 || r.limit > DECISION_EXPORT_PAGE_MAX) {
      throw invalidQuery(`limit must be an integer from 1 to ${DECISION_EXPORT_PAGE_MAX}.`);
    }
    const problem = decisionExportProblem(r, 'export');
    if (problem) throw invalidQuery(problem);
    const context = { kind: 'decision_export' as const, scope: decisionSearchScope(r) };
    let cursor: CursorPosition | undefined;
    if (r.cursor !== undefined) {
      const decoded = decodeCursor(await this.key(), r.cursor, context);
      if ('error' in decoded) throw invalidCursor();
      cursor = decoded;
    }
    const rows = await this.repository.read(async (em) => {
      await this.checkVisible(em, r);
      return readDecisions(em, {
        ...decisionFiltersOf(r),
        cursor,
        older: false,
        take: r.limit + 1,
        probeBeyondCursor: false,
      });
    });
    const more = rows.positions.length > r.limit;
    const last = rows.positions[r.limit - 1];
    return {
      events: rows.events.slice(0, r.limit),
      externalPlayerIds: rows.externalPlayerIds.slice(0, r.limit),
      nextCursor: more && last ? encodeCursor(await this.key(), { ...context, ...last }) : undefined,
    };
  }

  /** 404 not_found when a filter names an organization, project, game or player the caller cannot see. */
  private async checkVisible(em: EntityManager, r: DecisionSearchFilters & { identityUserId: string }): Promise<void> {
    const objects = [
      ['organizations', r.organizationId],
      ['projects', r.projectId],
      ['games', r.gameId],
      ['players', r.playerId],
    ] as const;
    for (const [table, id] of objects) {
      if (id !== undefined && !(await canSee(em, r.identityUserId, table, id))) {
        throw new AppError('not_found', 'No such object in an organization you are a member of.');
      }
    }
  }

  async records(r: RecordsRequest): Promise<RecordsPage> {
    // The edge validates the query; the same rules again here, for callers on the transport.
    if (r.kind !== 'players' && r.kind !== 'events') throw invalidQuery('kind must be players or events.');
    const kind: RecordKind = r.kind;
    if (!Number.isInteger(r.limit) || r.limit < 1 || r.limit > RECORDS_LIMIT_MAX) {
      throw invalidQuery(`limit must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`);
    }
    for (const [name, value] of [
      ['organizationId', r.organizationId],
      ['projectId', r.projectId],
      ['gameId', r.gameId],
    ] as const) {
      if (value !== undefined && !isUuid(value)) throw invalidQuery(`${name} must be a valid uuid.`);
    }
    let after: CursorPosition | undefined;
    if (r.cursor !== undefined) {
      const decoded = decodeCursor(await this.key(), r.cursor, { kind, scope: cursorScope(r) });
      if ('error' in decoded) throw invalidCursor();
      after = decoded;
    }
    const rows = await this.repository.read(async (em) => {
      // Each page checks membership again: a filter naming an object the caller no longer sees is not found, and
      // the records themselves are limited to the caller's organizations by the query.
      const filters = [
        ['organizations', r.organizationId],
        ['projects', r.projectId],
        ['games', r.gameId],
      ] as const;
      for (const [table, id] of filters) {
        if (id !== undefined && !(await canSee(em, r.identityUserId, table, id))) {
          throw new AppError('not_found', 'No such object in an organization you are a member of.');
        }
      }
      return readRecords(em, {
        identityUserId: r.identityUserId,
        kind,
        organizationId: r.organizationId,
        projectId: r.projectId,
        gameId: r.gameId,
        after,
        take: r.limit + 1,
      });
    });
    const more = rows.positions.length > r.limit;
    const key = await this.key();
    const scope = cursorScope(r);
    // At most RECORDS_LIMIT_MAX HMACs per page: cheap next to the query.
    const cursors = rows.positions.slice(0, r.limit).map((position) => encodeCursor(key, { kind, scope, ...position }));
    return {
      kind,
      players: rows.players.slice(0, r.limit),
      events: rows.events.slice(0, r.limit),
      nextCursor: more ? cursors.at(-1) : undefined,
      cursors,
    };
  }

  /**
   * One page of an organization's audit trail, newest first (CONTRACT section 11.2): the owner and admins read it, a
   * viewer 403 forbidden, a non-member 404 not_found; limit, filters and cursor follow the records' rules and codes.
   */
  async audit(r: AuditRequest): Promise<AuditPage> {
    if (!Number.isInteger(r.limit) || r.limit < 1 || r.limit > RECORDS_LIMIT_MAX) {
      throw invalidQuery(`limit must be an integer from 1 to ${RECORDS_LIMIT_MAX}.`);
    }
    for (const [name, value] of [
      ['organizationId', r.organizationId],
      ['projectId', r.projectId],
      ['gameId', r.gameId],
    ] as const) {
      if (value !== undefined && !isUuid(value)) throw invalidQuery(`${name} must be a valid uuid.`);
    }
    for (const [name, value] of [
      ['actor', r.actor],
      ['action', r.action],
    ] as const) {
      if (value !== undefined && (value.length < 1 || value.length > 200)) {
        throw invalidQuery(`${name} must have 1 to 200 characters.`);
      }
    }
    for (const [name, value] of [
      ['from', r.fromMicros],
      ['to', r.toMicros],
    ] as const) {
      if (value !== undefined && (value < AUDIT_MICROS_MIN || value > AUDIT_MICROS_MAX)) {
        throw invalidQuery(`${name} must lie in years 0001 to 9999 (UTC).`);
      }
    }
    if (r.fromMicros !== undefined && r.toMicros !== undefined && r.toMicros <= r.fromMicros) {
      throw invalidQuery('to must be after from.');
    }
    const context = { kind: 'audit' as const, scope: auditScope(r) };
    let after: CursorPosition | undefined;
    if (r.cursor !== undefined) {
      const decoded = decodeCursor(await this.key(), r.cursor, context);
      if ('error' in decoded) throw invalidCursor();
      after = decoded;
    }
    const rows = await this.repository.read(async (em) => {
      const role = (
        await em.execute<{ role: Role }[]>(
          'select role from ledger.members where organization_id = ? and identity_user_id = ?',
          [r.organizationId, r.identityUserId],
        )
      )[0]?.role;
      if (!role) throw new AppError('not_found', 'No such object in an organization you are a member of.');
      if (role === 'viewer') {
        throw new AppError('forbidden', 'Your role in this organization cannot read its audit trail; viewers cannot.');
      }
      return readAuditEntries(em, {
        organizationId: r.organizationId,
        projectId: r.projectId,
        gameId: r.gameId,
        actor: r.actor,
        action: r.action,
        fromMicros: r.fromMicros?.toString(),
        toMicros: r.toMicros?.toString(),
        after,
        take: r.limit + 1,
      });
    });
    const key = await this.key();
    const cursors = rows.positions.slice(0, r.limit).map((position) => encodeCursor(key, { ...context, ...position }));
    return {
      entries: rows.entries.slice(0, r.limit),
      nextCursor: rows.positions.length > r.limit ? cursors.at(-1) : undefined,
      cursors,
    };
  }
}

export interface AuditRequest {
  identityUserId: string;
  organizationId: string;
  projectId?: string | undefined;
  gameId?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  /** Epoch microseconds: from inclusive, to exclusive. */
  fromMicros?: bigint | undefined;
  toMicros?: bigint | undefined;
  cursor?: string | undefined;
  limit: number;
}

export interface AuditPage {
  entries: AuditEntryRow[];
  nextCursor: string | undefined;
  cursors: string[];
}

/** The instants a bound of an audit window may name (epoch microseconds of 0001-01-01 and 9999-12-31, UTC). */
const AUDIT_MICROS_MIN = BigInt(Date.parse('0001-01-01T00:00:00Z')) * 1000n;
const AUDIT_MICROS_MAX = BigInt(Date.parse('9999-12-31T23:59:59.999Z')) * 1000n + 999n;

/** The filters an audit cursor is bound to, in one canonical spelling. */
function auditScope(r: AuditRequest): string {
  return JSON.stringify([
    r.organizationId.toLowerCase(),
    r.projectId?.toLowerCase() ?? null,
    r.gameId?.toLowerCase() ?? null,
    r.actor ?? null,
    r.action ?? null,
    r.fromMicros?.toString() ?? null,
    r.toMicros?.toString() ?? null,
  ]);
}
