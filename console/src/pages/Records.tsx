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
import { credits, FailureText, TableBox, useTitle } from '../components.tsx';

interface Filters {
  kind: string;
  organizationId: string;
  projectId: string;
  gameId: string;
  first: string;
}

/** The decisions (and players) explorer: the filters of GET /api/developer/v1/records, cursor pagination. */
export default function RecordsPage({
  snapshot,
  kind,
  gameId,
}: {
  snapshot: Snapshot;
  kind?: string | undefined;
  gameId?: string | undefined;
}) {
  const id = useId();
  useTitle(kind === 'players' ? 'Records: players' : 'Records: decisions');
  const initial: Filters = {
    kind: kind === 'players' ? 'players' : 'events',
    organizationId: '',
    projectId: '',
    gameId: gameId ?? '',
    first: '25',
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
    const variables: Record<string, unknown> = { kind: applied.kind };
    if (applied.first !== '') variables.first = /^\d+$/.test(applied.first) ? Number(applied.first) : applied.first;
    if (after) variables.after = after;
    for (const key of ['organizationId', 'projectId', 'gameId'] as const)
      if (applied[key]) variables[key] = applied[key];
    client
      .query<RecordsResult>({ query: RECORDS, variables, fetchPolicy: 'network-only' })
      .then((r) => {
        if (stopped) return;
        if (r.error) throw r.error;
        setError(undefined);
        setResult(r.data?.records ?? null);
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
  }, [applied, after]);

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
      <form className="action filters" onSubmit={submit} aria-label="Record filters" noValidate>
        <div className="field">
          <label htmlFor={`${id}-kind`}>Kind</label>
          <select id={`${id}-kind`} value={form.kind} onChange={(e) => setForm({ ...form, kind: e.target.value })}>
            <option value="events">decisions (events)</option>
            <option value="players">players</option>
          </select>
        </div>
        {select('organizationId', 'Organization', snapshot.organizations)}
        {select('projectId', 'Project', snapshot.projects)}
        {select('gameId', 'Game', snapshot.games)}
        <div className="field">
          <label htmlFor={`${id}-first`}>Page size</label>
          <input
            id={`${id}-first`}
            inputMode="numeric"
            value={form.first}
            onChange={(e) => setForm({ ...form, first: e.target.value })}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
          />
          {error && (
            <p className="error" id={`${id}-error`} role="alert">
              <FailureText failure={error} />
            </p>
          )}
        </div>
        <button type="submit">Show records</button>
      </form>
      <TableBox label="Records page">
        <table aria-label="Records page">
          <thead>
            {applied.kind === 'events' ? (
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Game</th>
                <th scope="col">Event type</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Reward</th>
                <th scope="col">Record</th>
              </tr>
            ) : (
              <tr>
                <th scope="col">First seen</th>
                <th scope="col">Game</th>
                <th scope="col">External player id</th>
                <th scope="col">Linked account</th>
                <th scope="col">Record</th>
              </tr>
            )}
          </thead>
          <tbody>
            {nodes.map((node) => {
              const game = snapshot.games.find((g) => g.id === node.gameId)?.name ?? node.gameId;
              const open = (
                <td key="open">
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
              );
              return node.__typename === 'DeveloperEvent' ? (
                <tr key={node.id}>
                  <td>{new Date(node.createdAt).toLocaleString()}</td>
                  <td>{game}</td>
                  <td>{node.eventType}</td>
                  <td>{node.status}</td>
                  <td>{node.reason ?? ''}</td>
                  <td>{credits(node.rewardCredits)}</td>
                  {open}
                </tr>
              ) : (
                <tr key={node.id}>
                  <td>{new Date(node.createdAt).toLocaleString()}</td>
                  <td>{game}</td>
                  <td>{node.externalPlayerId}</td>
                  <td>{node.creditsUserId ?? 'not linked'}</td>
                  {open}
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableBox>
      {nodes.length === 0 && !error && <p>No records.</p>}
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
          <h2>
            {selected.__typename === 'DeveloperEvent' ? 'Decision' : 'Player'} {selected.id}
          </h2>
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
