import type { PlayerRecord } from '../../api.ts';
import { Section, TableBox } from '../../components.tsx';
import { LinkIntents } from '../LinkIntents.tsx';
import { playerDecisionsHref } from './LiveDecisions.tsx';

export interface PlayersSectionProps {
  gameId: string;
  /** The newest players, or undefined until the first read. */
  players: PlayerRecord[] | undefined;
}

/** The game's newest players, with a link to all of them. */
export function PlayersSection({ gameId, players }: PlayersSectionProps) {
  return (
    <Section title="Players">
      {players && players.length === 0 ? (
        <p className="empty">
          No players yet: a player appears when your game server asks for a link intent for one of its in-game players.
        </p>
      ) : (
        <TableBox label="Players">
          <table aria-label="Players">
            <thead>
              <tr>
                <th scope="col">External player id</th>
                <th scope="col">Linked account</th>
                <th scope="col">Username</th>
                <th scope="col">Linked at</th>
                <th scope="col">First seen</th>
              </tr>
            </thead>
            <tbody>
              {(players ?? []).map((p) => (
                <tr key={p.id}>
                  <td>
                    <a href={playerDecisionsHref(gameId, p.id)} title={`Decisions of player ${p.externalPlayerId}`}>
                      {p.externalPlayerId}
                    </a>
                  </td>
                  <td>{p.creditsUserId ?? 'not linked'}</td>
                  <td>{p.username ?? ''}</td>
                  <td>{p.linkedAt ? new Date(p.linkedAt).toLocaleString() : ''}</td>
                  <td>{new Date(p.createdAt).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <p>
        <a href={`#/records/players/${gameId}`}>All players of this game</a>
      </p>
    </Section>
  );
}

/** The game's link intents. */
export function LinkIntentsSection({ gameId }: { gameId: string }) {
  return (
    <Section title="Link intents">
      <LinkIntents gameId={gameId} />
    </Section>
  );
}
