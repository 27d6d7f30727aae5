// Pre-fills a bench database with history: N accepted events of the bench's own games and players, written in SQL
// with generate_series in steps of STEP rows (one statement and transaction each), respecting every constraint and
// every invariant the ledger and the fault suite rely on:
//   - each event names its game's project, organization, secret key and one of its players (the foreign keys), has
//     the bench's rule's event type, status accepted with reward 1 (decision_shape), a 32-byte payload hash, and an
//     event id unique in its game (events_one_decision);
//   - receipt times are in the past, one second apart, ending an hour before now (5 million events span 58 days);
//     occurred_at = created_at (inside the timestamp window);
//   - each game's spent_credits grows by its history (spent = Σ accepted rewards; the bench's budgets are far larger);
//   - daily totals are written for the days the ledger's retention keeps (today and the 2 days before; older days are
//     what the retention removes), equal to the sum of the history's accepted rewards of each player and day;
//   - no minute counters: every history minute is older than the retention's 10 minutes.
// The ids are generated in order (the primary key and each index are appended to, not split at random places), which
// is what makes 5 million rows take minutes instead of much longer; the event ids of live traffic stay random.
import pg from 'pg';
import { checkInvariants } from './invariants.ts';

const STEP = 500_000;

/** The bench's deterministic ids (load/bench-ledger.ts): game g, player p of game g. */
const GAME = (g: string) => `('00000000-0000-4000-9000-' || lpad((${g})::text, 12, '0'))::uuid`;
const PLAYER = (g: string, p: string) =>
  `('00000000-0000-4000-8000-' || lpad(((${g}) * 10000 + (${p}))::text, 12, '0'))::uuid`;

export async function prefillEvents(
  url: string,
  options: { events: number; games: number; players: number; eventType: string },
  log: (line: string) => void = () => {},
): Promise<{ seconds: number }> {
  const started = Date.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The fault suite's invariants (sums of spending, daily totals, minute counters, ...) before and after: the
    // prefill must not add a violation (the bench's own fixtures record no funding, which one of them reports).
    const before = new Map((await checkInvariants(client)).map((r) => [r.name, r.violations]));
    const [{ now }] = (
      await client.query<{ now: Date }>(`select date_trunc('second', now()) - interval '1 hour' as now`)
    ).rows as [{ now: Date }];
    for (let from = 1; from <= options.events; from += STEP) {
      const to = Math.min(options.events, from + STEP - 1);
      // Row i: game (i mod G) + 1, player ((i / G) mod P) + 1, received at `now` - i seconds.
      await client.query(
        `insert into ledger.events (id, game_id, project_id, organization_id, event_id, player_id, key_id, event_type,
           occurred_at, status, reason, reward_credits, payload_hash, created_at)
         select ('00000000-0000-4000-a000-' || lpad(to_hex(i), 12, '0'))::uuid, g.id, g.project_id, g.organization_id,
           ('00000000-0000-4000-b000-' || lpad(to_hex(i), 12, '0'))::uuid,
           ${PLAYER('i % $3 + 1', '(i / $3) % $4 + 1')}, k.id, $5,
           $6::timestamptz - make_interval(secs => i), 'accepted', null, 1, sha256(int8send(i)),
           $6::timestamptz - make_interval(secs => i)
         from generate_series($1::bigint, $2::bigint) i
         join ledger.games g on g.id = ${GAME('i % $3 + 1')}
         join ledger.keys k on k.game_id = g.id and k.kind = 'secret'`,
        [from, to, options.games, options.players, options.eventType, now],
      );
      log(`prefill: ${to.toLocaleString('en')} of ${options.events.toLocaleString('en')} events`);
    }
    await client.query('begin');
    await client.query(
      `update ledger.games g set spent_credits = g.spent_credits + h.n
         from (select game_id, count(*) as n from ledger.events group by 1) h
        where h.game_id = g.id`,
    );
    await client.query(
      `insert into ledger.player_daily_totals as t (game_id, player_id, day, credits)
       select game_id, player_id, (created_at at time zone 'UTC')::date, sum(reward_credits)
         from ledger.events
        where created_at >= ((now() at time zone 'UTC')::date - 2)::timestamp at time zone 'UTC'
        group by 1, 2, 3
       on conflict (game_id, player_id, day) do update set credits = t.credits + excluded.credits`,
    );
    await client.query('commit');
    await client.query('vacuum analyze ledger.events');
    await client.query('analyze');
    const seconds = (Date.now() - started) / 1000;
    const broken = (await checkInvariants(client)).filter((r) => r.violations > (before.get(r.name) ?? 0));
    if (broken.length) {
      throw new Error(
        `prefill broke invariants: ${broken.map((r) => `${r.name} (${r.example ?? r.violations})`).join('; ')}`,
      );
    }
    log('prefill: no invariant of the fault suite has a violation it did not have before');
    return { seconds };
  } finally {
    await client.end();
  }
}
