// The decision search's failures in plain words, and the look-up of a game's own player id (the search read,
// exact), whose miss is a failure of the console's own.
import { client, type ServerFailure } from '../../api.ts';
import { FailureText } from '../../components.tsx';
import { SEARCH, type SearchResult } from '../../search.ts';

/** The console's failure code when a game's own player id is not among the game's players. */
export const PLAYER_NOT_FOUND = 'player_not_found';

/**
 * The player id (UUID) of a game's own player id (externalPlayerId), by the search read (one probe per game, exact);
 * a `player_not_found` failure when the game has none.
 */
export async function playerIdOf(gameId: string, externalPlayerId: string): Promise<string> {
  const r = await client.query<SearchResult>({
    query: SEARCH,
    variables: { text: externalPlayerId },
    fetchPolicy: 'network-only',
  });
  if (r.error) throw r.error;
  const found = r.data?.search?.players.find(
    (p) => p.player.gameId === gameId && p.player.externalPlayerId === externalPlayerId,
  );
  if (found) return found.player.id;
  throw { code: PLAYER_NOT_FOUND, message: `No player ${externalPlayerId} in this game.` } satisfies ServerFailure;
}

/** A failure of the search in plain words (the page checks its input first, so these are rare). */
export function SearchFailure({ failure, onRestart }: { failure: ServerFailure; onRestart: () => void }) {
  if (failure.code === 'INVALID_CURSOR') {
    return (
      <p className="error" role="alert">
        This page link was made for other filters or has been altered.{' '}
        <button type="button" className="secondary" onClick={onRestart}>
          Show the newest decisions
        </button>{' '}
        <span className="code">(INVALID_CURSOR)</span>
      </p>
    );
  }
  if (failure.code === PLAYER_NOT_FOUND) {
    return (
      <p className="error" role="alert">
        {failure.message} Check the id as your game server sent it (externalPlayerId), or the game chosen.
      </p>
    );
  }
  if (failure.code === 'not_found') {
    return (
      <p className="error" role="alert">
        An organization, project, game or player in these filters does not exist or is not in an organization you are a
        member of. <span className="code">(not_found)</span>
      </p>
    );
  }
  if (failure.code === 'INVALID_RECORD_QUERY') {
    return (
      <p className="error" role="alert">
        A filter in this link is not one the search accepts: check the filters and search again.{' '}
        <span className="code">(INVALID_RECORD_QUERY)</span>
      </p>
    );
  }
  return (
    <p className="error" role="alert">
      <FailureText failure={failure} />
    </p>
  );
}
