// The ledger's invariants, in SQL over the whole database: checked by the fault suite after every phase
// (test/faults/checks.ts re-exports them; docs/reliability.md) and by the benchmarks' prefill (prefill.ts), which
// must not break them. Each query returns the violating rows.
import type pg from 'pg';

export interface InvariantResult {
  name: string;
  violations: number;
  example?: string;
}

/** The invariants by name; each query returns the violating rows. */
export const INVARIANTS: Array<{ name: string; sql: string }> = [
  {
    name: 'one decision per (game, eventId)',
    sql: `select game_id, event_id, count(*) from ledger.events group by 1, 2 having count(*) > 1`,
  },
  {
    name: 'game spent = Σ accepted rewards',
    sql: `select g.id, g.spent_credits, coalesce(sum(e.reward_credits) filter (where e.status = 'accepted'), 0) as accepted
          from ledger.games g left join ledger.events e on e.game_id = g.id
          group by g.id having g.spent_credits <> coalesce(sum(e.reward_credits) filter (where e.status = 'accepted'), 0)`,
  },
  {
    name: 'game spent ≤ budget ≤ ceiling',
    sql: `select id, spent_credits, budget_credits, max_payout_credits from ledger.games
          where not (spent_credits <= budget_credits and budget_credits <= max_payout_credits)`,
  },
  {
    name: 'project spent ≤ budget ≤ ceiling',
    sql: `select p.id, coalesce(sum(g.spent_credits), 0) as spent, p.budget_credits, p.max_payout_credits
          from ledger.projects p left join ledger.games g on g.project_id = p.id group by p.id
          having not (coalesce(sum(g.spent_credits), 0) <= p.budget_credits and p.budget_credits <= p.max_payout_credits)`,
  },
  {
    name: 'daily totals = Σ accepted rewards per player and UTC day',
    sql: `with accepted as (
            select player_id, (created_at at time zone 'UTC')::date as day, sum(reward_credits) as credits
            from ledger.events where status = 'accepted' group by 1, 2)
          select coalesce(a.player_id, t.player_id) as player_id, coalesce(a.day, t.day) as day,
            a.credits as accepted, t.credits as total
          from accepted a full join ledger.player_daily_totals t on t.player_id = a.player_id and t.day = a.day
          where coalesce(a.credits, 0) <> coalesce(t.credits, 0)
            and (t.day is not null or a.day >= (now() at time zone 'UTC')::date - 2)`,
  },
  {
    name: 'daily totals within the daily cap',
    sql: `select t.player_id, t.day, t.credits, g.daily_player_cap_credits from ledger.player_daily_totals t
          join ledger.players p on p.id = t.player_id join ledger.games g on g.id = p.game_id
          where t.credits > g.daily_player_cap_credits`,
  },
  {
    name: 'project allocated = Σ game budgets',
    sql: `select p.id, p.allocated_credits, coalesce(sum(g.budget_credits), 0) as games
          from ledger.projects p left join ledger.games g on g.project_id = p.id group by p.id
          having p.allocated_credits <> coalesce(sum(g.budget_credits), 0)`,
  },
  {
    name: 'organization balance + project budgets = recorded funding',
    sql: `with funding as (
            select organization_id, sum((details->>'amountCredits')::numeric) as credits
            from ledger.audit_log where action = 'fundOrganization' group by 1),
          budgets as (select organization_id, sum(budget_credits) as credits from ledger.projects group by 1)
          select o.id, o.balance_credits, b.credits as project_budgets, f.credits as funding
          from ledger.organizations o left join funding f on f.organization_id = o.id
            left join budgets b on b.organization_id = o.id
          where not o.unlimited_funding
            and o.balance_credits + coalesce(b.credits, 0) <> coalesce(f.credits, 0)`,
  },
  {
    // Counters of minutes more than 5 minutes before a game's newest minute are pruned by design, and the ledger's
    // retention removes minutes more than 10 minutes old (and daily totals more than 2 days old, above): minutes
    // older than a game's oldest counter, or older than 10 minutes for a game with none left, are not compared.
    name: 'minute counters = decisions stored',
    sql: `with decided as (
            select game_id, date_trunc('minute', created_at, 'UTC') as minute, count(*) as n
            from ledger.events group by 1, 2),
          oldest as (select game_id, min(minute) as minute from ledger.game_minute_counters group by 1)
          select coalesce(d.game_id, c.game_id) as game_id, coalesce(d.minute, c.minute) as minute,
            d.n as decisions, c.attempts
          from decided d full join ledger.game_minute_counters c on c.game_id = d.game_id and c.minute = d.minute
            left join oldest o on o.game_id = coalesce(d.game_id, c.game_id)
          where coalesce(d.n, 0) <> coalesce(c.attempts, 0)
            and (c.attempts is not null or d.minute >= coalesce(o.minute, now() - interval '10 minutes'))`,
  },
];

export async function checkInvariants(client: pg.Client): Promise<InvariantResult[]> {
  const results: InvariantResult[] = [];
  for (const invariant of INVARIANTS) {
    const { rows } = await client.query(invariant.sql);
    results.push({
      name: invariant.name,
      violations: rows.length,
      ...(rows.length > 0 ? { example: JSON.stringify(rows[0]) } : {}),
    });
  }
  return results;
}
