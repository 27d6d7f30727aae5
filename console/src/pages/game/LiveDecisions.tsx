import type { ActionResult, EventRecord, Key, PlayerRecord, Rule, ServerFailure } from '../../api.ts';
import { credits, FailureAlert, Section, TableBox, when } from '../../components.tsx';
import type { LiveDecisions } from '../../live.ts';
import { reasonLabel } from '../decisions/reasons.ts';
import { FirstEvent } from '../FirstEvent.tsx';

/** Whether the page is live (the subscription) or polling, as a polite status. */
export function LiveIndicator({ live }: { live: LiveDecisions }) {
  return (
    <p className={`live-mode live-mode-${live.mode}`} role="status" data-testid="live-mode">
      <span className="live-dot" aria-hidden="true" /> <strong>{live.mode === 'live' ? 'Live' : 'Polling'}</strong>
      {live.mode === 'live'
        ? ': decisions appear as they are made (subscription).'
        : `: refreshed every second (${live.detail}).`}
    </p>
  );
}

export interface LiveDecisionsSectionProps {
  gameId: string;
  live: LiveDecisions;
  /** The newest decisions, newest first. */
  decisions: EventRecord[];
  /** Whether the decisions were read at least once. */
  loaded: boolean;
  error: ServerFailure | undefined;
  keys: Key[];
  rules: Rule[];
  /** The secret key shown once, if any (for the first event's command). */
  shownSecret: string | undefined;
  firstPlayer: string | undefined;
  /** Whether firstPlayer is linked to an account. */
  firstPlayerLinked: boolean;
  /** The caller may run actions. */
  write: boolean;
  /** A test player was linked from the first event's guide. */
  onTestPlayer: (result: ActionResult) => void;
  /** The game's newest players (their external ids name the player column), if read. */
  players?: PlayerRecord[] | undefined;
}

/** The decision search's address of one player's decisions in a game (console/src/pages/decisions). */
export const playerDecisionsHref = (gameId: string, playerId: string) =>
  `#/records?game=${encodeURIComponent(gameId)}&player=${encodeURIComponent(playerId)}`;

/** A player as a link to their decisions: the game's external id when known, else the start of the player id. */
export function PlayerLink({
  gameId,
  playerId,
  players,
}: {
  gameId: string;
  playerId: string;
  players?: PlayerRecord[] | undefined;
}) {
  const external = players?.find((p) => p.id === playerId)?.externalPlayerId;
  return (
    <a href={playerDecisionsHref(gameId, playerId)} title={`Decisions of player ${playerId}`}>
      {external ?? `${playerId.slice(0, 8)}…`}
    </a>
  );
}

/** The newest decisions, or how to send a first event while there are none. */
export function LiveDecisionsSection({
  gameId,
  live,
  decisions,
  loaded,
  error,
  keys,
  rules,
  shownSecret,
  firstPlayer,
  firstPlayerLinked,
  write,
  onTestPlayer,
  players,
}: LiveDecisionsSectionProps) {
  return (
    <Section title="Live decisions">
      <p className="hint">The newest 20 decisions.</p>
      <LiveIndicator live={live} />
      {error && <FailureAlert failure={error} />}
      {loaded && decisions.length === 0 ? (
        <FirstEvent
          gameId={gameId}
          keys={keys}
          rules={rules}
          shownKey={shownSecret}
          playerId={firstPlayer}
          playerLinked={firstPlayerLinked}
          write={write}
          onTestPlayer={onTestPlayer}
        />
      ) : (
        <TableBox label="Live decisions">
          <table aria-label="Live decisions" className="stack">
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Player</th>
                <th scope="col">Event type</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Reward</th>
              </tr>
            </thead>
            <tbody>
              {decisions.map((e) => (
                <tr key={e.id}>
                  <td className="when" data-label="Received">
                    {when(e.createdAt)}
                  </td>
                  <td data-label="Player">
                    <PlayerLink gameId={gameId} playerId={e.playerId} players={players} />
                  </td>
                  <td data-label="Event type">{e.eventType}</td>
                  <td className="lead">
                    <span className={`decision-status ${e.status}`}>{e.status}</span>
                  </td>
                  <td className="lead">{e.reason ? reasonLabel(e.reason) : ''}</td>
                  <td className="lead reward">{credits(e.rewardCredits)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <p>
        <a href={`#/records/events/${gameId}`}>All decisions of this game</a>
      </p>
    </Section>
  );
}
