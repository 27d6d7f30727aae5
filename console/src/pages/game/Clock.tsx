// The game page's clock (advanceGameClock) and its recent changes (the organization's audit trail for this game).
import { useEffect, useMemo, useState } from 'react';
import { type AuditEntry, auditPage, type Game, type ServerFailure, type Snapshot } from '../../api.ts';
import { ActionForm, FailureAlert, Section } from '../../components.tsx';
import { usePoll } from '../../poll.ts';
import { AuditTable } from '../activity/entries.tsx';
import { activityAddress } from '../activity/filter.ts';

const HOUR = 3600;
const DAY = 86_400;

/** The steps the clock can be moved forward by (the action takes 1 to 31,536,000 seconds). */
const STEPS: Array<[string, number]> = [
  ['1 hour', HOUR],
  ['6 hours', 6 * HOUR],
  ['1 day', DAY],
  ['7 days', 7 * DAY],
  ['30 days', 30 * DAY],
];

/** A span of seconds in days, hours and minutes ("1 day 6 hours"). */
export function spanText(seconds: number): string {
  const days = Math.floor(seconds / DAY);
  const hours = Math.floor((seconds % DAY) / HOUR);
  const minutes = Math.floor((seconds % HOUR) / 60);
  const parts = [
    days > 0 ? `${days} ${days === 1 ? 'day' : 'days'}` : '',
    hours > 0 ? `${hours} ${hours === 1 ? 'hour' : 'hours'}` : '',
    minutes > 0 ? `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : `${seconds} seconds`;
}

const utc = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});
/** An instant in UTC (the daily cap's days are UTC days). */
const utcText = (ms: number) => `${utc.format(new Date(ms))} UTC`;

/**
 * The game's clock now: the server's reading (the snapshot's clock.now, which already holds the advance) moved on by
 * the time elapsed in the browser since it was read, so that the browser's own clock does not matter.
 */
function useGameNow(clockNow: string): number {
  const [tick, setTick] = useState(() => Date.now());
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new reading restarts the elapsed time
  const readAt = useMemo(() => Date.now(), [clockNow]);
  useEffect(() => {
    const timer = setInterval(() => setTick(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return Date.parse(clockNow) + Math.max(0, tick - readAt);
}

/** The clock, what follows it, and (owners, admins) moving it forward after a confirmation naming the consequence. */
export function GameClockSection({ game, write, reload }: { game: Game; write: boolean; reload: () => void }) {
  const advanced = game.clock.advancedSeconds;
  const gameNow = useGameNow(game.clock.now);
  return (
    <Section title="Game clock">
      <p data-testid="game-clock">
        <strong>{utcText(gameNow)}</strong>{' '}
        {advanced === 0 ? '(real time: never advanced).' : `(${spanText(advanced)} ahead of real time).`}
      </p>
      <p className="hint">
        The game's events are admitted on this clock: the occurredAt window (5 minutes either side) and the UTC day of
        the daily per-player cap follow it, so moving it past midnight starts a new day for every player's cap. The rate
        limit and the decisions' received time stay real time. A clock only moves forward.
      </p>
      {write && (
        <ActionForm
          compact
          action="advanceGameClock"
          title={`Advance the clock of ${game.name}`}
          submitLabel="Advance the clock"
          fixed={{ gameId: game.id }}
          fields={[
            {
              name: 'step',
              label: 'Move forward by',
              kind: 'select',
              options: STEPS.map(([label]) => label),
              initial: '1 day',
            },
          ]}
          transform={async (input) => ({
            gameId: input.gameId,
            seconds: STEPS.find(([label]) => label === input.step)?.[1] ?? DAY,
          })}
          danger={(input) => {
            const seconds = STEPS.find(([label]) => label === input.step)?.[1] ?? DAY;
            return {
              title: `Move the clock of ${game.name} forward by ${input.step}?`,
              body:
                `The game's clock goes from ${utcText(gameNow)} to ${utcText(gameNow + seconds * 1000)}, for good: ` +
                "a clock never moves back. The daily cap's day and the occurredAt window follow the clock: players' " +
                'daily caps start again on each new UTC day of the clock, and events your game server sends with ' +
                'the real time as occurredAt are rejected as timestamp_out_of_window once the clock is more than 5 ' +
                'minutes ahead.',
              confirmLabel: 'Advance the clock',
            };
          }}
          onDone={reload}
        />
      )}
    </Section>
  );
}

/**
 * The game's newest changes from the audit trail (owners and admins only), read again whenever the game's state in
 * the snapshot changes (after an action on this page).
 */
export function RecentChangesSection({
  snapshot,
  game,
  allowed,
  role,
}: {
  snapshot: Snapshot;
  game: Game;
  allowed: boolean;
  role: string | undefined;
}) {
  const version = JSON.stringify([
    game,
    snapshot.rules.filter((r) => r.gameId === game.id),
    snapshot.keys.filter((k) => k.gameId === game.id),
  ]);
  const changes = usePoll<AuditEntry[]>(
    async () => (allowed ? (await auditPage(game.organizationId, { gameId: game.id }, 5)).entries : []),
    `${game.id}/${version}`,
    30_000,
    120_000,
  );
  const failure: ServerFailure | undefined = changes.error;
  return (
    <Section title="Recent changes">
      {!allowed ? (
        <p className="empty">Changes are shown to the organization's owner and admins only (your role: {role}).</p>
      ) : (
        <>
          {failure && <FailureAlert failure={failure} />}
          {changes.value && changes.value.length === 0 && <p className="empty">No changes yet.</p>}
          {changes.value && changes.value.length > 0 && (
            <AuditTable label="Recent changes" entries={changes.value} snapshot={snapshot} />
          )}
          <p>
            <a href={activityAddress(game.organizationId, { gameId: game.id })}>All activity of this game</a>
          </p>
        </>
      )}
    </Section>
  );
}
