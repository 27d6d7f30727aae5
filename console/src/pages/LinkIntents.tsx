import { useState } from 'react';
import { client, LINK_INTENTS, type LinkIntentsPage } from '../api.ts';
import { FailureAlert, TableBox } from '../components.tsx';
import { usePoll } from '../poll.ts';

const PAGE = 20;

async function intentsPage(gameId: string, after: string | undefined) {
  const result = await client.query<LinkIntentsPage>({
    query: LINK_INTENTS,
    variables: { gameId, first: PAGE, after },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  return result.data?.linkIntents ?? { edges: [], pageInfo: { endCursor: null, hasNextPage: false } };
}

const time = (value: string | null) => (value ? new Date(value).toLocaleString() : '');

/** A game's link intents with their states, newest first, 20 a page (GraphQL linkIntents), refreshed every 5 s. */
export function LinkIntents({ gameId }: { gameId: string }) {
  // The cursors of the pages before the one shown: the first page has none.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors.at(-1);
  const page = usePoll(() => intentsPage(gameId, after), `${gameId}/${after ?? ''}`, 5000);
  const next = page.value?.pageInfo.hasNextPage ? page.value.pageInfo.endCursor : null;
  return (
    <>
      <p className="hint">
        A game server's requests to link one of its players to a platform account: pending until a player approves them
        in the app (consumed) or for 10 minutes (expired). Tokens are never shown here.
      </p>
      {page.error && <FailureAlert failure={page.error} />}
      <TableBox label="Link intents">
        <table aria-label="Link intents">
          <thead>
            <tr>
              <th scope="col">External player id</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Consumed</th>
            </tr>
          </thead>
          <tbody>
            {(page.value?.edges ?? []).map(({ node }) => (
              <tr key={node.id}>
                <td>{node.externalPlayerId}</td>
                <td>
                  <span className={`state state-${node.state}`}>{node.state}</span>
                </td>
                <td>{time(node.createdAt)}</td>
                <td>{time(node.expiresAt)}</td>
                <td>{time(node.consumedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      {page.value && page.value.edges.length === 0 && cursors.length === 0 && <p>No link intents yet.</p>}
      {(cursors.length > 0 || next) && (
        <p>
          {cursors.length > 0 && (
            <button type="button" className="secondary" onClick={() => setCursors([])}>
              Newest link intents
            </button>
          )}{' '}
          {next && (
            <button type="button" className="secondary" onClick={() => setCursors([...cursors, next])}>
              Older link intents
            </button>
          )}
        </p>
      )}
    </>
  );
}
