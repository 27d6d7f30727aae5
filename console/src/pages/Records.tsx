import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import {
  client,
  type EventRecord,
  failureOf,
  type PlayerRecord,
  RECORDS,
  type RecordsPage as RecordsResult,
  type ServerFailure,
  type Snapshot,
} from '../api.ts';
import { FailureText, TableBox, useTitle } from '../components.tsx';
import { objectAddress, SEARCH, type SearchResult } from '../search.ts';
import DecisionSearch from './decisions/DecisionSearch.tsx';
import { PAGE_SIZES, playerHash } from './decisions/search.ts';

interface Filters {
  kind: string;
  organizationId: string;
  projectId: string;
  gameId: string;
  first: string;
  /** The game's own player id or the player id: the search read finds it (exactly), in place of a page. */
  player: string;
}

/**
 * The records page: decision search (`#/records?…`, ./decisions/) or the players explorer (`#/records/players`,
 * `#/records/players/<gameId>`). The older `#/records/events/<gameId>` is the decision search filtered by that game.
 */
export default function RecordsPage({
  snapshot,
  kind,
  gameId,
}: {
  snapshot: Snapshot;
  kind?: string | undefined;
  gameId?: string | undefined;
}) {
  return kind === 'players' ? (
    <PlayerRecords snapshot={snapshot} gameId={gameId} />
  ) : (
    <DecisionSearch snapshot={snapshot} gameId={gameId} />
  );
}

/** The players explorer: the filters of GET /api/developer/v1/records (kind players), cursor pagination. */
function PlayerRecords({ snapshot, gameId }: { snapshot: Snapshot; gameId?: string | undefined }) {
  const kind = 'players';
  const id = useId();
  useTitle('Records: players');
  const initial: Filters = {
    kind,
    organizationId: '',
    projectId: '',
    gameId: gameId ?? '',
    first: '25',
    player: '',
  };
  const [form, setForm] = useState<Filters>(initial);
  const [applied, setApplied] = useState<Filters>(initial);
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const [result, setResult] = useState<RecordsResult['records']>(null);
  const [error, setError] = useState<ServerFailure | undefined>();
  const [selected, setSelected] = useState<EventRecord | PlayerRecord | undefined>();
  const after = cursors[cursors.length - 1];
  // Opening a record moves the focus to it; closing it gives the focus back to its Open button.
  const detail = useRef<HTMLElement>(null);
  const opener = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (selected) detail.current?.focus();
  }, [selected]);
  const close = () => {
    setSelected(undefined);
    if (opener.current?.isConnected) opener.current.focus();
  };

  useEffect(() => {
    let stopped = false;
    const read = applied.player.trim() === '' ? readPage(applied, after) : readPlayer(applied, snapshot);
    read
      .then((records) => {
        if (stopped) return;
        setError(undefined);
        setResult(records);
      })
      .catch((e) => {
        if (!stopped) {
          setResult(null);
          setError(failureOf(e));
        }
      });
    return () => {
      stopped = true;
    };
  }, [applied, after, snapshot]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCursors([undefined]);
    setSelected(undefined);
    setApplied({ ...form });
  };
  const select = (name: keyof Filters, label: string, options: Array<{ id: string; name: string }>) => (
    <div className="field">
      <label htmlFor={`${id}-${name}`}>{label}</label>
      <select id={`${id}-${name}`} value={form[name]} onChange={(e) => setForm({ ...form, [name]: e.target.value })}>
        <option value="">(any)</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </div>
  );
  const nodes = result?.edges.map((e) => e.node) ?? [];
  return (
    <>
      <h1>Records</h1>
      <p className="records-switch">
        <a href="#/records">Decisions</a> · Players
      </p>
      <form className="action filters" onSubmit={submit} aria-label="Record filters" noValidate>
        {select('organizationId', 'Organization', snapshot.organizations)}
        {select('projectId', 'Project', snapshot.projects)}
        {select('gameId', 'Game', snapshot.games)}
        <div className="field">
          <label htmlFor={`${id}-player`}>Player (the game’s own id or player id)</label>
          <input
            id={`${id}-player`}
            value={form.player}
            onChange={(e) => setForm({ ...form, player: e.target.value })}
            autoComplete="off"
            spellCheck={false}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-first`}>Page size</label>
          <select id={`${id}-first`} value={form.first} onChange={(e) => setForm({ ...form, first: e.target.value })}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Show records</button>
      </form>
      {error && (
        <p className="error" role="alert">
          <FailureText failure={error} />
        </p>
      )}
      <TableBox label="Records page">
        <table aria-label="Records page">
          <thead>
            <tr>
              <th scope="col">First seen</th>
              <th scope="col">Game</th>
              <th scope="col">External player id</th>
              <th scope="col">Linked account</th>
              <th scope="col">Decisions</th>
              <th scope="col">Record</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((node) => {
              if (node.__typename !== 'DeveloperPlayer') return null;
              const game = snapshot.games.find((g) => g.id === node.gameId)?.name ?? node.gameId;
              return (
                <tr key={node.id}>
                  <td>{new Date(node.createdAt).toLocaleString()}</td>
                  <td>{game}</td>
                  <td>
                    <a href={objectAddress.player(node.id)}>{node.externalPlayerId}</a>
                  </td>
                  <td>{node.creditsUserId ?? 'not linked'}</td>
                  <td>
                    <a href={playerHash(node.gameId, node.id)}>Decisions of {node.externalPlayerId}</a>
                  </td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      onClick={(event) => {
                        opener.current = event.currentTarget;
                        setSelected(node);
                      }}
                      aria-label={`Open record ${node.id}`}
                    >
                      Open
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableBox>
      {nodes.length === 0 && !error && (
        <p>{applied.player.trim() ? `No player ${applied.player.trim()} matches these filters.` : 'No records.'}</p>
      )}
      <nav aria-label="Pages" className="pager">
        <button
          type="button"
          className="secondary"
          disabled={cursors.length < 2}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Previous page
        </button>{' '}
        <button
          type="button"
          className="secondary"
          disabled={!result?.pageInfo.hasNextPage}
          onClick={() => setCursors([...cursors, result?.pageInfo.endCursor ?? undefined])}
        >
          Next page
        </button>{' '}
        <span>Page {cursors.length}</span>
      </nav>
      {selected && (
        <section aria-label="Record" className="card record" ref={detail} tabIndex={-1}>
          <h2>Player {selected.id}</h2>
          <dl>
            {Object.entries(selected)
              .filter(([key]) => key !== '__typename')
              .map(([key, value]) => (
                <div key={key}>
                  <dt>{key}</dt>
                  <dd>
                    <code>{value === null ? 'null' : String(value)}</code>
                  </dd>
                </div>
              ))}
          </dl>
          <button type="button" className="secondary" onClick={close}>
            Close
          </button>
        </section>
      )}
    </>
  );
}

/** One page of the game's players (records, kind players). */
async function readPage(applied: Filters, after: string | undefined): Promise<RecordsResult['records']> {
  const variables: Record<string, unknown> = { kind: applied.kind };
  if (applied.first !== '') variables.first = /^\d+$/.test(applied.first) ? Number(applied.first) : applied.first;
  if (after) variables.after = after;
  for (const key of ['organizationId', 'projectId', 'gameId'] as const) if (applied[key]) variables[key] = applied[key];
  const r = await client.query<RecordsResult>({ query: RECORDS, variables, fetchPolicy: 'network-only' });
  if (r.error) throw r.error;
  return r.data?.records ?? null;
}

/** The players an id names (the search read: exact), within the organization, project and game chosen. */
async function readPlayer(applied: Filters, snapshot: Snapshot): Promise<RecordsResult['records']> {
  const r = await client.query<SearchResult>({
    query: SEARCH,
    variables: { text: applied.player.trim() },
    fetchPolicy: 'network-only',
  });
  if (r.error) throw r.error;
  const projectOf = (gameId: string) => snapshot.games.find((g) => g.id === gameId)?.projectId;
  const players = (r.data?.search?.players ?? [])
    .map((p) => p.player)
    .filter(
      (p) =>
        (!applied.organizationId || p.organizationId === applied.organizationId) &&
        (!applied.projectId || projectOf(p.gameId) === applied.projectId) &&
        (!applied.gameId || p.gameId === applied.gameId),
    );
  return {
    edges: players.map((p) => ({ cursor: p.id, node: { __typename: 'DeveloperPlayer' as const, ...p } })),
    pageInfo: { endCursor: null, hasNextPage: false },
  };
}
