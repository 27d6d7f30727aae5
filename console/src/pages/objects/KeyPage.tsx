// A key's own page (#/key/<id>): what it is, and its use today (the decisions of the events it posted since 00:00
// UTC, and the newest one's time). When a key was last used before today is not stored, and the page says so.
import type { Snapshot } from '../../api.ts';
import { FailureAlert, Section, useTitle, when } from '../../components.tsx';
import { useFound } from './found.ts';

export default function KeyPage({ snapshot, id }: { snapshot: Snapshot; id: string }) {
  const key = snapshot.keys.find((k) => k.id === id.toLowerCase());
  useTitle(key ? `Key ${key.name}` : 'Key');
  const { found, failure, loading } = useFound(id);
  if (!key) {
    return (
      <>
        <h1>Key</h1>
        <p role="alert">No key {id} in your organizations.</p>
      </>
    );
  }
  const game = snapshot.games.find((g) => g.id === key.gameId);
  const use = found?.keys.find((k) => k.key.id === key.id);
  return (
    <>
      <h1>Key {key.name}</h1>
      <dl className="facts">
        <div>
          <dt>Game</dt>
          <dd>{game ? <a href={`#/game/${game.id}/keys`}>{game.name}</a> : key.gameId}</dd>
        </div>
        <div>
          <dt>Kind</dt>
          <dd>{key.kind === 'secret' ? 'secret (game servers: events, link intents)' : 'public (game clients)'}</dd>
        </div>
        <div>
          <dt>Prefix</dt>
          <dd>
            <code>{key.prefix}…</code>
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{when(key.createdAt)}</dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>{key.revokedAt ? `revoked ${when(key.revokedAt)}` : 'active'}</dd>
        </div>
      </dl>
      <Section title="Use today (UTC)">
        {failure && <FailureAlert failure={failure} />}
        {loading && <p>Loading…</p>}
        {use && key.kind === 'public' && (
          <p>A public key reads the game’s public configuration; it posts no events, so no decision records its use.</p>
        )}
        {use && key.kind === 'secret' && (
          <p>
            {use.decisionsToday === 0
              ? 'No events posted with this key today.'
              : `${use.decisionsToday.toLocaleString('en-US')} ${use.decisionsToday === 1 ? 'event' : 'events'} posted today; last used ${use.lastUsedToday ? when(use.lastUsedToday) : ''}.`}
          </p>
        )}
        <p className="muted">
          When the key was last used before today is not stored: the ledger keeps each decision’s key, and this page
          counts today’s decisions of the game by their key.
        </p>
      </Section>
    </>
  );
}
