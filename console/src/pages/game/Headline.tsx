import { gql } from '@apollo/client';
import { client, type Game, type Organization, type Project } from '../../api.ts';
import { credits, dollars, FailureAlert } from '../../components.tsx';
import { usePoll } from '../../poll.ts';
import { GameBanners, gameState } from '../state.tsx';
import { spanText } from './Clock.tsx';

export interface GameHeadlineProps {
  game: Game;
  org: Organization | undefined;
  project: Project | undefined;
  write: boolean;
  reload: () => void;
}

/** The game's name, where it belongs, its settings and the caller's role, then its state banners. */
export function GameHeadline({ game, org, project, write, reload }: GameHeadlineProps) {
  return (
    <>
      <h1>Game {game.name}</h1>
      <p className="where">
        {org && <a href={`#/org/${org.id}`}>Organization {org.name}</a>}
        {project && (
          <>
            {' '}
            › <a href={`#/project/${project.id}`}>Project {project.name}</a>
          </>
        )}
        . Platform {game.platform}, status <strong>{game.status}</strong>, daily cap per player{' '}
        {credits(game.dailyPlayerCapCredits)} credits ({dollars(game.dailyPlayerCapCredits)}).
        {game.clock.advancedSeconds > 0 && ` Game clock ${spanText(game.clock.advancedSeconds)} ahead of real time.`}{' '}
        Your role: {org?.role}.
      </p>
      <GameBanners game={game} write={write} reload={reload} />
    </>
  );
}

const DAY_STATS = gql`
  query ConsoleDayStats($gameId: UUID!, $from: DateTime!, $to: DateTime!) {
    decisionStats(gameId: $gameId, from: $from, to: $to, bucket: hour) {
      buckets { start accepted rejected rewardCredits reasons { reason count } }
    }
  }
`;

interface HourBucket {
  start: string;
  accepted: number;
  rejected: number;
  rewardCredits: number;
  reasons: Array<{ reason: string; count: number }>;
}

export interface DayFigures {
  accepted: number;
  rejected: number;
  spentToday: number;
  reasons: Array<{ reason: string; count: number }>;
}

const HOUR_MS = 3_600_000;

/** The last 24 hours in whole hours (the current one included) and what was spent since midnight UTC. */
async function dayFigures(gameId: string): Promise<DayFigures> {
  const now = Date.now();
  const to = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  const from = to - 24 * HOUR_MS;
  const result = await client.query<{ decisionStats: { buckets: HourBucket[] } | null }>({
    query: DAY_STATS,
    variables: { gameId, from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  const buckets = result.data?.decisionStats?.buckets ?? [];
  const midnight = new Date(now).setUTCHours(0, 0, 0, 0);
  const reasons = new Map<string, number>();
  let accepted = 0;
  let rejected = 0;
  let spentToday = 0;
  for (const bucket of buckets) {
    accepted += bucket.accepted;
    rejected += bucket.rejected;
    if (Date.parse(bucket.start) >= midnight) spentToday += bucket.rewardCredits;
    for (const r of bucket.reasons) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + r.count);
  }
  return {
    accepted,
    rejected,
    spentToday,
    reasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count),
  };
}

/**
 * The figures a developer looks at first: budget left, spent today (UTC), accepted and rejected in the last 24
 * hours, and the top rejection reasons with their counts. Read again whenever a decision arrives (`changes`).
 */
export function GameFigures({ game, changes, live }: { game: Game; changes: number; live: boolean }) {
  // Read again on each decision while the subscription works; every 2 s while it does not (the service may be gone:
  // the figures then say they are stale).
  const figures = usePoll(() => dayFigures(game.id), game.id, 2000, 60_000, { live, nudge: changes });
  const state = gameState(game);
  const day = figures.value;
  const top = day?.reasons.slice(0, 3) ?? [];
  // While the figures cannot be read, what is shown says so: the last figures read, marked stale with their time, or
  // "unavailable" when none was ever read.
  const failed = figures.error !== undefined;
  const waiting = failed ? 'unavailable' : '…';
  return (
    <section
      aria-label="Headline figures"
      className={failed ? 'figures figures-stale' : 'figures'}
      data-testid="figures"
    >
      {failed && (
        <p className="stale-note" data-testid="figures-stale">
          <strong>{day ? 'Stale' : 'Unavailable'}:</strong>{' '}
          {day && figures.readAt
            ? `the service cannot be reached; these figures are from ${new Date(figures.readAt).toLocaleTimeString()} and may be out of date.`
            : 'the service cannot be reached; the figures are shown once it answers again.'}
        </p>
      )}
      <dl>
        <div
          className={
            state.exhausted || state.noBudget ? 'figure figure-bad' : state.low ? 'figure figure-warn' : 'figure'
          }
        >
          <dt>Budget left</dt>
          <dd>
            {credits(state.left)} <span className="usd">{dollars(state.left)}</span>
          </dd>
        </div>
        <div className="figure">
          <dt>Spent today (UTC)</dt>
          <dd>
            {day ? credits(day.spentToday) : waiting} {day && <span className="usd">{dollars(day.spentToday)}</span>}
          </dd>
        </div>
        <div className="figure">
          <dt>Accepted, last 24 h</dt>
          <dd>{day ? credits(day.accepted) : waiting}</dd>
        </div>
        <div className={day && day.rejected > 0 ? 'figure figure-warn' : 'figure'}>
          <dt>Rejected, last 24 h</dt>
          <dd>{day ? credits(day.rejected) : waiting}</dd>
        </div>
        <div className="figure figure-wide">
          <dt>Top rejection reasons, last 24 h</dt>
          <dd>
            {!day ? (
              waiting
            ) : top.length === 0 ? (
              'none'
            ) : (
              <ol className="reasons" aria-label="Top rejection reasons">
                {top.map((r) => (
                  <li key={r.reason}>
                    <code>{r.reason}</code>: {credits(r.count)}
                  </li>
                ))}
              </ol>
            )}
          </dd>
        </div>
      </dl>
      {figures.error && <FailureAlert failure={figures.error} />}
    </section>
  );
}
