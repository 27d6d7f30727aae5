// The rule dry-run's SQL: a bounded count of the window's decisions, then one call of ledger.simulate_rule
// (services/ledger/src/sql/simulate_rule.sql), both inside the caller's READ ONLY transaction.
import type { EntityManager } from '@mikro-orm/postgresql';

type Raw = Record<string, unknown>;

/** The game's stored decisions created in [from, to), counted up to `atMost` (a range of events_by_game). */
export async function countWindowDecisions(
  em: EntityManager,
  q: { gameId: string; from: Date; to: Date; atMost: number },
): Promise<number> {
  const statement = countWindowDecisionsStatement(q);
  const rows = (await em.execute(statement.sql, statement.params)) as Raw[];
  return Number(rows[0]?.n ?? 0);
}

/** The statement of countWindowDecisions. */
export function countWindowDecisionsStatement(q: { gameId: string; from: Date; to: Date; atMost: number }): {
  sql: string;
  params: unknown[];
} {
  return {
    sql: `select count(*)::int as n from (
       select 1 from ledger.events e
        where e.game_id = ? and e.created_at >= ?::timestamptz and e.created_at < ?::timestamptz
        limit ?) s`,
    params: [q.gameId, q.from.toISOString(), q.to.toISOString(), q.atMost],
  };
}

export interface SimulationFiguresRow {
  accepted: number;
  rejected: number;
  credits: number;
  /** Rejections per reason (reasons with none absent). */
  reasons?: Record<string, number>;
}

export interface SimulationDecisionRow {
  status: string;
  reason: string | null;
  rewardCredits: number;
}

/** The answer of ledger.simulate_rule (see the SQL file's header). */
export interface SimulationRow {
  considered: number;
  spentBefore: number;
  flipCount: number;
  stored: SimulationFiguresRow;
  proposed: SimulationFiguresRow;
  days: Array<{ day: string; stored: SimulationFiguresRow; proposed: SimulationFiguresRow }>;
  flips: Array<{
    id: string;
    eventId: string;
    playerId: string;
    eventType: string;
    createdAtMs: number;
    stored: SimulationDecisionRow;
    proposed: SimulationDecisionRow;
  }>;
}

/** One call of ledger.simulate_rule; undefined when the game does not exist. */
export async function simulateRule(
  em: EntityManager,
  q: {
    gameId: string;
    eventType: string;
    rewardCredits: number;
    dailyPlayerCapCredits: number;
    active: boolean;
    from: Date;
    to: Date;
    rateLimitPerMinute: number;
    flipsMax: number;
  },
): Promise<SimulationRow | undefined> {
  const rows = (await em.execute(
    `select ledger.simulate_rule(?::uuid, ?, ?::bigint, ?::bigint, ?, ?::timestamptz, ?::timestamptz, ?::int, ?::int)::text
       as result`,
    [
      q.gameId,
      q.eventType,
      String(q.rewardCredits),
      String(q.dailyPlayerCapCredits),
      q.active,
      q.from.toISOString(),
      q.to.toISOString(),
      q.rateLimitPerMinute,
      q.flipsMax,
    ],
  )) as Raw[];
  const text = rows[0]?.result;
  return typeof text === 'string' ? (JSON.parse(text) as SimulationRow) : undefined;
}
