// A player's own page (#/player/<id>): the linked account, what the player was paid today against the game's daily
// cap and in all, and the newest decisions, each a link to its own page.
import type { Snapshot } from '../../api.ts';
import { Bar, credits, creditsWithDollars, FailureAlert, Section, useTitle, when } from '../../components.tsx';
import { objectAddress } from '../../search.ts';
import { reasonLabel } from '../decisions/reasons.ts';
import { searchHash } from '../decisions/search.ts';
import { useDecisions, useFound } from './found.ts';

export default function PlayerPage({ snapshot, id }: { snapshot: Snapshot; id: string }) {
  const { found, failure, loading } = useFound(id);
  const match = found?.players.find((p) => p.player.id === id.toLowerCase());
  const player = match?.player;
  useTitle(player ? `Player ${player.externalPlayerId}` : 'Player');
  const recent = useDecisions({ gameId: player?.gameId, playerId: player?.id, first: 10 }, !player);
  if (loading) return <p>Loading…</p>;
  if (failure) return <FailureAlert failure={failure} />;
  if (!match || !player) {
    return (
      <>
        <h1>Player</h1>
        <p role="alert">No player {id} in your organizations.</p>
      </>
    );
  }
  const game = snapshot.games.find((g) => g.id === player.gameId);
  const cap = game?.dailyPlayerCapCredits ?? 0;
  return (
    <>
      <h1>Player {player.externalPlayerId}</h1>
      <dl className="facts">
        <div>
          <dt>Game</dt>
          <dd>{game ? <a href={`#/game/${game.id}/players`}>{game.name}</a> : player.gameId}</dd>
        </div>
        <div>
          <dt>The game’s own id</dt>
          <dd>
            <code>{player.externalPlayerId}</code>
          </dd>
        </div>
        <div>
          <dt>Player id</dt>
          <dd>
            <code>{player.id}</code>
          </dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{when(player.createdAt)}</dd>
        </div>
      </dl>
      <Section title="Linked account">
        {player.creditsUserId ? (
          <p>
            Linked {player.linkedAt ? when(player.linkedAt) : ''} to {player.username ?? 'an account'} (account id{' '}
            <code>{player.creditsUserId}</code>): events of this player are paid to that account.
          </p>
        ) : (
          <p>
            Not linked: the player has not approved a link intent in the app yet, so their events are rejected with
            “player not linked”. The game’s Players tab shows the link intents.
          </p>
        )}
      </Section>
      <Section title="Rewards">
        <Bar
          label="Paid today (UTC)"
          value={match.rewardedTodayCredits}
          max={cap}
          detail={`of the game’s daily cap of ${credits(cap)}`}
        />
        <p>In all: {creditsWithDollars(match.rewardedCredits)}.</p>
      </Section>
      <Section title="Recent decisions">
        {recent.failure && <FailureAlert failure={recent.failure} />}
        {recent.edges?.length === 0 && <p>No decisions yet.</p>}
        <ul className="found-list">
          {(recent.edges ?? []).map((e) => (
            <li key={e.node.id}>
              <a href={objectAddress.decision(e.node.id)}>
                {e.node.eventType}: {e.node.status}
                {e.node.reason ? ` (${reasonLabel(e.node.reason)})` : `, ${creditsWithDollars(e.node.rewardCredits)}`}
              </a>{' '}
              <span className="muted">{when(e.node.createdAt)}</span>
            </li>
          ))}
        </ul>
        <p>
          <a href={searchHash({ game: player.gameId, player: player.id, size: 25 })}>
            Every decision of {player.externalPlayerId} in Records
          </a>
        </p>
      </Section>
    </>
  );
}
