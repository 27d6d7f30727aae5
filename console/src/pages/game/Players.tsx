import type { PlayerRecord } from '../../api.ts';
import { ActionForm, Reveal, Section, TableBox } from '../../components.tsx';
import { LinkIntents } from '../LinkIntents.tsx';
import { playerDecisionsHref } from './LiveDecisions.tsx';

export interface PlayersSectionProps {
  gameId: string;
  /** The caller may run actions (link a test player). */
  write: boolean;
  /** The newest players, or undefined until the first read. */
  players: PlayerRecord[] | undefined;
}

/** The game's newest players, with a link to all of them. */
export function PlayersSection({ gameId, write, players }: PlayersSectionProps) {
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
                  <td className="wrap-anywhere">
                    {p.test ? `test account ${p.creditsUserId ?? ''}` : (p.creditsUserId ?? 'not linked')}
                  </td>
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
      {write && (
        <Reveal label="Link a test player">
          <p className="hint">
            A player of this game linked to a test account of the sandbox: its events are decided as any linked
            player's, without your app, a device permit or an approval.
          </p>
          <ActionForm
            action="createTestPlayer"
            title="Link a test player"
            submitLabel="Link a test player"
            fixed={{ gameId }}
            fields={[
              {
                name: 'externalPlayerId',
                label: 'Player id in your game',
                kind: 'text',
                rule: 'Enter an id of 1 to 200 characters, without control characters, not used in this game yet.',
              },
            ]}
          />
        </Reveal>
      )}
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
