// The records page's decision search: filters for organization, project, game, player, event id, status, reason,
// event type and a time window, all kept in the URL (search.ts); pages both ways with a fixed page-size menu; a
// player column; a detail panel that says in words why a decision went the way it did and what fixes it; the
// search's export (DecisionExport.tsx).
import { useQuery } from '@apollo/client/react';
import { type FormEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { client, failureOf, type ServerFailure, type Snapshot } from '../../api.ts';
import { credits, dollars, TableBox, useTitle, when } from '../../components.tsx';
import { DecisionDetail } from './DecisionDetail.tsx';
import { DecisionExport } from './DecisionExport.tsx';
import { type Form, formOf, searchOf, summaryOf } from './form-state.ts';
import { REASONS, reasonLabel } from './reasons.ts';
import { PLAYER_NOT_FOUND, playerIdOf, SearchFailure } from './SearchFailure.tsx';
import {
  DECISIONS,
  type DecisionEdge,
  type DecisionsResult,
  firstPage,
  isExternalPlayerId,
  newerPage,
  olderPage,
  PAGE_SIZES,
  pageNumberOf,
  readSearch,
  type Search,
  searchHash,
  searchProblems,
  variablesOf,
} from './search.ts';
import { aboutDecisions, pagesOf, TOTAL_STATS, type TotalBucket, totalOf, totalWindow } from './total.ts';
import './decisions.css';

export default function DecisionSearch({ snapshot, gameId }: { snapshot: Snapshot; gameId?: string | undefined }) {
  const id = useId();
  useTitle('Records: decisions');
  const [search, setSearch] = useState<Search>(() => readSearch(window.location.hash, gameId));
  const [form, setForm] = useState<Form>(() => formOf(search));
  const [edges, setEdges] = useState<DecisionEdge[]>([]);
  const [pageInfo, setPageInfo] = useState<NonNullable<DecisionsResult['decisions']>['pageInfo'] | undefined>();
  const [loading, setLoading] = useState(false);
  const [failure, setFailure] = useState<ServerFailure | undefined>();
  const [selected, setSelected] = useState<DecisionEdge | undefined>();
  // On a phone the filters fold behind their button (always shown wider: CSS); a filter with a problem opens them.
  const [filtersOpen, setFiltersOpen] = useState(false);
  const opener = useRef<HTMLElement | null>(null);
  const problems = searchProblems(search);
  const problemCount = Object.keys(problems).length;
  // The total, estimated from the game's statistics where they count the search's filters (total.ts).
  const window_ = useMemo(
    () => (problemCount > 0 ? undefined : totalWindow(search, Date.now())),
    [search, problemCount],
  );
  const stats = useQuery<{ decisionStats: { buckets: TotalBucket[] } | null }>(TOTAL_STATS, {
    variables: window_ ?? { gameId: '', from: '', to: '' },
    skip: !window_,
    fetchPolicy: 'network-only',
  });
  const total =
    window_ && stats.data?.decisionStats && !stats.loading
      ? totalOf(stats.data.decisionStats.buckets, search)
      : undefined;
  const pageNumber = pageNumberOf(search);
  const filtersShown = filtersOpen || problemCount > 0;

  // Back and forward (and links to #/records?…) change the URL: the page follows it.
  useEffect(() => {
    const follow = () => {
      if (!/^#\/records(\/|\?|$)/.test(window.location.hash)) return;
      const next = readSearch(window.location.hash, gameId);
      setSearch(next);
      setForm(formOf(next));
      setSelected(undefined);
    };
    window.addEventListener('popstate', follow);
    window.addEventListener('hashchange', follow);
    return () => {
      window.removeEventListener('popstate', follow);
      window.removeEventListener('hashchange', follow);
    };
  }, [gameId]);

  // A page turned from the pager at the table's foot brings the reader back to the top of the results (the summary
  // takes the focus, which scrolls it into view), instead of leaving them at the bottom of the new page.
  const summaryRef = useRef<HTMLParagraphElement>(null);
  const turnPage = (next: Search) => {
    go(next);
    summaryRef.current?.focus();
  };

  /** Goes to a search: a new history entry, so that back returns to the one before. */
  const go = useCallback((next: Search) => {
    window.history.pushState(null, '', searchHash(next));
    setSearch(next);
    setForm(formOf(next));
    setSelected(undefined);
  }, []);

  useEffect(() => {
    if (problemCount > 0) {
      setEdges([]);
      setPageInfo(undefined);
      return;
    }
    let stopped = false;
    setLoading(true);
    // The game's own player id is looked up in the game's players first (the search takes a player id).
    const resolved =
      isExternalPlayerId(search.player) && search.game
        ? playerIdOf(search.game, search.player).then((player) => ({ ...search, player }))
        : Promise.resolve(search);
    resolved
      .then((s) =>
        client.query<DecisionsResult>({ query: DECISIONS, variables: variablesOf(s), fetchPolicy: 'network-only' }),
      )
      .then((r) => {
        if (stopped) return;
        if (r.error) throw r.error;
        setFailure(undefined);
        setEdges(r.data?.decisions?.edges ?? []);
        setPageInfo(r.data?.decisions?.pageInfo);
      })
      .catch((e) => {
        if (stopped) return;
        setEdges([]);
        setPageInfo(undefined);
        // The console's own failure (a game's own player id not found) as it is; the service's through failureOf.
        setFailure((e as ServerFailure | undefined)?.code === PLAYER_NOT_FOUND ? (e as ServerFailure) : failureOf(e));
      })
      .finally(() => {
        if (!stopped) setLoading(false);
      });
    return () => {
      stopped = true;
    };
  }, [search, problemCount]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    go(firstPage(searchOf(form)));
  };
  const clear = () => go({ size: search.size });
  const close = () => {
    setSelected(undefined);
    if (opener.current?.isConnected) opener.current.focus();
  };

  const gameName = (gameId: string) => snapshot.games.find((g) => g.id === gameId)?.name ?? 'a game you no longer see';
  const fieldProps = (name: keyof Form) => ({
    id: `${id}-${name}`,
    value: form[name],
    'aria-invalid': problems[name] ? true : undefined,
    'aria-describedby': problems[name] ? `${id}-${name}-problem` : undefined,
  });
  const problemOf = (name: keyof Form) =>
    problems[name] ? (
      <p className="error" id={`${id}-${name}-problem`} role="alert">
        {problems[name]}
      </p>
    ) : null;
  const set = (name: keyof Form) => (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value });
  const choose = (name: 'org' | 'project' | 'game', label: string, options: Array<{ id: string; name: string }>) => (
    <div className="field">
      <label htmlFor={`${id}-${name}`}>{label}</label>
      <select {...fieldProps(name)} onChange={set(name)}>
        <option value="">(any)</option>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
      {problemOf(name)}
    </div>
  );
  const filtered = SEARCH_FILTERS.filter((key) => search[key] !== undefined).length;

  return (
    <>
      <h1>Records</h1>
      <p className="records-switch">
        Decisions · <a href="#/records/players">Players</a>
      </p>
      <button
        type="button"
        className="secondary filters-toggle"
        aria-expanded={filtersShown}
        aria-controls={`${id}-filters`}
        onClick={() => setFiltersOpen(!filtersShown)}
      >
        Filters ({filtered})
      </button>
      <form
        id={`${id}-filters`}
        className={filtersShown ? 'action filters decision-filters filters-open' : 'action filters decision-filters'}
        onSubmit={submit}
        aria-label="Record filters"
        noValidate
      >
        {choose('org', 'Organization', snapshot.organizations)}
        {choose('project', 'Project', snapshot.projects)}
        {choose('game', 'Game', snapshot.games)}
        <div className="field">
          <label htmlFor={`${id}-player`}>Player (your game's id, or player id)</label>
          <input {...fieldProps('player')} onChange={set('player')} spellCheck={false} autoComplete="off" />
          {problemOf('player')}
        </div>
        <div className="field">
          <label htmlFor={`${id}-event`}>Event id</label>
          <input {...fieldProps('event')} onChange={set('event')} spellCheck={false} autoComplete="off" />
          {problemOf('event')}
        </div>
        <div className="field">
          <label htmlFor={`${id}-status`}>Status</label>
          <select {...fieldProps('status')} onChange={set('status')}>
            <option value="">(any)</option>
            <option value="accepted">accepted</option>
            <option value="rejected">rejected</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-reason`}>Reason</label>
          <select {...fieldProps('reason')} onChange={set('reason')}>
            <option value="">(any)</option>
            {Object.entries(REASONS).map(([code, text]) => (
              <option key={code} value={code}>
                {text.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-type`}>Event type</label>
          <input {...fieldProps('type')} onChange={set('type')} spellCheck={false} autoComplete="off" />
          {problemOf('type')}
        </div>
        <div className="field">
          <label htmlFor={`${id}-from`}>Received from</label>
          <input type="datetime-local" {...fieldProps('from')} onChange={set('from')} />
          {problemOf('from')}
        </div>
        <div className="field">
          <label htmlFor={`${id}-to`}>Received before</label>
          <input type="datetime-local" {...fieldProps('to')} onChange={set('to')} />
          {problemOf('to')}
        </div>
        <div className="field">
          <label htmlFor={`${id}-size`}>Page size</label>
          <select
            id={`${id}-size`}
            value={form.size}
            onChange={(e) => {
              setForm({ ...form, size: e.target.value });
              // A new size applies at once, from the first page.
              go(firstPage({ ...search, size: Number(e.target.value) }));
            }}
          >
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </div>
        <div className="filter-buttons">
          <button type="submit">Show records</button>{' '}
          <button type="button" className="secondary" onClick={clear} disabled={filtered === 0}>
            Clear filters
          </button>
        </div>
      </form>
      {failure && <SearchFailure failure={failure} onRestart={() => go(firstPage(search))} />}
      <p className="search-summary" aria-live="polite" ref={summaryRef} tabIndex={-1}>
        {problemCount > 0
          ? 'Fix the highlighted filters to search.'
          : loading
            ? 'Searching…'
            : failure
              ? 'No records to show: the search did not answer (above).'
              : `${pageNumber && pageNumber > 1 ? `Page ${pageNumber}: ` : ''}${summaryOf(edges.length, filtered, Boolean(pageInfo?.hasNextPage || search.after || search.before))}${total === undefined ? '' : ` In all ${aboutDecisions(total)} (an estimate from the game's statistics).`}`}
      </p>
      <div className={selected ? 'decisions-layout with-detail' : 'decisions-layout'}>
        <div className="decisions-list">
          <TableBox label="Records page">
            <table aria-label="Records page" className="stack">
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">Player</th>
                  <th scope="col">Game</th>
                  <th scope="col">Event type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Reward</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {edges.map((edge) => {
                  const node = edge.node;
                  return (
                    <tr key={node.id} aria-current={selected?.node.id === node.id ? 'true' : undefined}>
                      <td className="when" data-label="Received">
                        {when(node.createdAt)}
                      </td>
                      <td data-label="Player">
                        <a
                          href={searchHash({ game: node.gameId, player: node.playerId, size: search.size })}
                          title="This player's decisions"
                        >
                          {edge.externalPlayerId}
                        </a>
                      </td>
                      <td data-label="Game">{gameName(node.gameId)}</td>
                      <td data-label="Event type">{node.eventType}</td>
                      <td className="lead">
                        <span className={`decision-status ${node.status}`}>{node.status}</span>
                      </td>
                      <td className="lead">{node.reason ? reasonLabel(node.reason) : ''}</td>
                      <td className="lead reward">{credits(node.rewardCredits)}</td>
                      <td className="open">
                        <button
                          type="button"
                          className="secondary"
                          aria-label={`Open record ${node.id}`}
                          aria-expanded={selected?.node.id === node.id}
                          onClick={(event) => {
                            opener.current = event.currentTarget;
                            setSelected(edge);
                          }}
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
          <nav aria-label="Pages" className="pager">
            <button
              type="button"
              className="secondary"
              disabled={!(search.after || search.before)}
              onClick={() => turnPage(firstPage(search))}
            >
              Newest
            </button>{' '}
            <button
              type="button"
              className="secondary"
              disabled={!pageInfo?.hasPreviousPage || !pageInfo.startCursor}
              onClick={() => pageInfo?.startCursor && turnPage(newerPage(search, pageInfo.startCursor))}
            >
              Newer page
            </button>{' '}
            <button
              type="button"
              className="secondary"
              disabled={!pageInfo?.hasNextPage || !pageInfo.endCursor}
              onClick={() => pageInfo?.endCursor && turnPage(olderPage(search, pageInfo.endCursor))}
            >
              Older page
            </button>
            {pageNumber !== undefined && ' '}
            {pageNumber !== undefined && (
              <span className="page-number" data-testid="page-number">
                Page {pageNumber.toLocaleString('en-US')}
                {total !== undefined ? ` of about ${pagesOf(total, search.size).toLocaleString('en-US')}` : ''}
              </span>
            )}
          </nav>
        </div>
        {selected && (
          <DecisionDetail
            edge={selected}
            snapshot={snapshot}
            size={search.size}
            onClose={close}
            amount={(value) => `${credits(value)} credits (${dollars(value)})`}
          />
        )}
      </div>
      <DecisionExport search={search} disabled={problemCount > 0} />
    </>
  );
}

const SEARCH_FILTERS = ['org', 'project', 'game', 'player', 'event', 'status', 'reason', 'type', 'from', 'to'] as const;
