import { lazy, Suspense, useEffect, useMemo, useRef, useState } from 'react';
import { GAME_STATUSES } from '../../../services/runtime/src/contracts/vocabulary.ts';
import {
  type ActionResult,
  canWrite,
  client,
  type EventRecord,
  type PlayerRecord,
  RECORDS,
  type RecordsPage,
  type Snapshot,
} from '../api.ts';
import {
  ActionForm,
  amountOf,
  Bar,
  CopyButton,
  credits,
  dollars,
  FailureAlert,
  figure,
  Section,
  TableBox,
  useTitle,
} from '../components.tsx';
import { type LiveDecisions, useLiveDecisions } from '../live.ts';
import { usePoll, useThrottled } from '../poll.ts';
import { Command, eventCommand, FirstEvent } from './FirstEvent.tsx';
import { LinkIntents } from './LinkIntents.tsx';
import { GameBanners } from './state.tsx';

async function page(kind: 'events' | 'players', gameId: string, first: number) {
  const result = await client.query<RecordsPage>({
    query: RECORDS,
    variables: { kind, gameId, first },
    fetchPolicy: 'network-only',
  });
  if (result.error) throw result.error;
  return result.data?.records?.edges.map((e) => e.node) ?? [];
}

const Charts = lazy(() => import('./Charts.tsx'));

/** The newest `count` of both lists (the subscription's and the last read), in the records API's order. */
function newest(received: EventRecord[], read: EventRecord[], count: number): EventRecord[] {
  const byId = new Map([...read, ...received].map((e) => [e.id, e]));
  return [...byId.values()]
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
    .slice(0, count);
}

/** Whether the page is live (the subscription) or polling, as a polite status. */
function LiveIndicator({ live }: { live: LiveDecisions }) {
  return (
    <p className={`live-mode live-mode-${live.mode}`} role="status" data-testid="live-mode">
      <span className="live-dot" aria-hidden="true" /> <strong>{live.mode === 'live' ? 'Live' : 'Polling'}</strong>
      {live.mode === 'live'
        ? ': decisions appear as they are made (subscription).'
        : `: refreshed every second (${live.detail}).`}
    </p>
  );
}

/** One game: budget, rules, keys, live decisions, players and link intents. */
export default function GamePage({
  snapshot,
  gameId,
  reload,
}: {
  snapshot: Snapshot;
  gameId: string;
  reload: () => void;
}) {
  const game = snapshot.games.find((g) => g.id === gameId);
  useTitle(game ? `Game ${game.name}` : 'Game not found');
  const [issued, setIssued] = useState<ActionResult | undefined>();
  const issuedRef = useRef<HTMLDivElement>(null);
  // A new key's banner takes the focus: it is what the action opened.
  useEffect(() => {
    if (issued?.issuedKey) issuedRef.current?.focus();
  }, [issued]);
  // Decisions arrive over the subscription while it works; the newest 20 are read at once and then polled every
  // second only while it does not (every 30 s otherwise, as a safety net).
  const live = useLiveDecisions(gameId);
  const events = usePoll(() => page('events', gameId, 20) as Promise<EventRecord[]>, gameId, 1000, 30_000, {
    live: live.mode === 'live',
  });
  const decisions = useMemo(() => newest(live.received, events.value ?? [], 20), [live.received, events.value]);
  const players = usePoll(() => page('players', gameId, 20) as Promise<PlayerRecord[]>, gameId, 5000);
  // A new decision changes the game's spending: the figures (snapshot) are read again, at most once a second.
  const reloadSoon = useThrottled(reload, 1000);
  const loaded = events.value !== undefined;
  const latest = decisions[0]?.id ?? '';
  const seen = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!loaded) return;
    if (seen.current !== undefined && latest !== seen.current) reloadSoon();
    seen.current = latest;
  }, [loaded, latest, reloadSoon]);
  if (!game) return <p role="alert">This game does not exist or you are not a member of its organization.</p>;
  const org = snapshot.organizations.find((o) => o.id === game.organizationId);
  const project = snapshot.projects.find((p) => p.id === game.projectId);
  const write = canWrite(org?.role);
  const rules = snapshot.rules.filter((r) => r.gameId === game.id);
  const keys = snapshot.keys.filter((k) => k.gameId === game.id);
  const projectGames = snapshot.games.filter((g) => g.projectId === game.projectId);
  const projectAvailable = (project?.budgetCredits ?? 0) - projectGames.reduce((sum, g) => sum + g.budgetCredits, 0);
  // The one-time banner goes as soon as its key is revoked.
  const shown = issued?.issuedKey && !keys.find((k) => k.id === issued.id)?.revokedAt ? issued : undefined;
  const shownSecret = shown?.kind === 'secret' ? (shown.issuedKey ?? undefined) : undefined;
  const firstPlayer = players.value?.[0]?.id;
  const activeRule = rules.find((r) => r.active);
  const sendCommand = eventCommand(
    window.location.origin,
    shownSecret ?? '$SECRET_KEY',
    firstPlayer ?? '$PLAYER_ID',
    activeRule?.eventType ?? 'level.up',
  );
  return (
    <>
      <h1>Game {game.name}</h1>
      <p>
        {org && <a href={`#/org/${org.id}`}>Organization {org.name}</a>}, project {project?.name}. Platform{' '}
        {game.platform}, status <strong>{game.status}</strong>, daily cap per player{' '}
        {credits(game.dailyPlayerCapCredits)} credits ({dollars(game.dailyPlayerCapCredits)}). Your role: {org?.role}.
      </p>
      <GameBanners game={game} write={write} reload={reload} />
      <Bar
        label="Budget"
        value={game.budgetCredits}
        max={game.maxPayoutCredits}
        detail={`of ceiling ${credits(game.maxPayoutCredits)}`}
      />
      <Bar
        label="Spent"
        value={game.spentCredits}
        max={game.budgetCredits}
        detail={`of budget ${credits(game.budgetCredits)}`}
      />
      {write && (
        <div className="forms">
          <ActionForm
            action="allocateGame"
            title="Allocate to game"
            submitLabel="Allocate"
            fixed={{ gameId: game.id }}
            fields={[
              { name: 'amountCredits', label: 'Amount to allocate to the game (credits)', kind: 'credits', min: 1 },
            ]}
            confirm={(input) => [
              [
                'Project budget not yet allocated to games',
                figure(projectAvailable),
                figure(projectAvailable - amountOf(input)),
              ],
              ['Game budget', figure(game.budgetCredits), figure(game.budgetCredits + amountOf(input))],
              ['Game ceiling', figure(game.maxPayoutCredits), figure(game.maxPayoutCredits)],
            ]}
            onDone={reload}
          />
          <ActionForm
            action="updateGame"
            title="Change game"
            submitLabel="Save game"
            fixed={{ gameId: game.id }}
            errorField="maxPayoutCredits"
            fields={[
              {
                name: 'maxPayoutCredits',
                label: `New ceiling (credits; now ${credits(game.maxPayoutCredits)})`,
                kind: 'credits',
                optional: true,
              },
              {
                name: 'dailyPlayerCapCredits',
                label: `New daily cap per player (credits; now ${credits(game.dailyPlayerCapCredits)})`,
                kind: 'credits',
                optional: true,
              },
              { name: 'status', label: 'Status', kind: 'select', options: [...GAME_STATUSES], initial: game.status },
            ]}
            danger={(input) =>
              input.status === 'paused' && game.status !== 'paused'
                ? {
                    title: `Pause ${game.name}?`,
                    body:
                      'While the game is paused every event is rejected with game_paused and players earn nothing. ' +
                      'You can resume it at any time.',
                    confirmLabel: 'Pause game',
                  }
                : undefined
            }
            onDone={reload}
          />
        </div>
      )}
      <Section title="Live decisions">
        <p className="hint">The newest 20 decisions.</p>
        <LiveIndicator live={live} />
        {events.error && <FailureAlert failure={events.error} />}
        {loaded && decisions.length === 0 ? (
          <FirstEvent keys={keys} rules={rules} shownKey={shownSecret} playerId={firstPlayer} />
        ) : (
          <TableBox label="Live decisions">
            <table aria-label="Live decisions">
              <thead>
                <tr>
                  <th scope="col">Received</th>
                  <th scope="col">Event type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Reward</th>
                </tr>
              </thead>
              <tbody>
                {decisions.map((e) => (
                  <tr key={e.id}>
                    <td>{new Date(e.createdAt).toLocaleString()}</td>
                    <td>{e.eventType}</td>
                    <td>{e.status}</td>
                    <td>{e.reason ?? ''}</td>
                    <td>{credits(e.rewardCredits)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
        <p>
          <a href={`#/records/events/${game.id}`}>All decisions of this game</a>
        </p>
      </Section>
      <Section title="Charts">
        <Suspense fallback={<p>Loading charts…</p>}>
          <Charts
            game={game}
            live={live.mode === 'live'}
            received={live.count}
            empty={
              <>
                {(!shownSecret || !firstPlayer) && (
                  <p>
                    In your shell, set{' '}
                    {[
                      !shownSecret && 'SECRET_KEY to a secret key of this game',
                      !firstPlayer && "PLAYER_ID to a player's playerId (a link intent answers it)",
                    ]
                      .filter(Boolean)
                      .join(' and ')}
                    , then:
                  </p>
                )}
                <Command label="Send an event" command={sendCommand} />
              </>
            }
          />
        </Suspense>
      </Section>
      <Section title="Reward rules">
        {rules.length === 0 ? (
          <p className="empty">
            No rules yet: events are rejected with <code>unknown_or_inactive_rule</code> until a rule rewards their
            type.{write ? ' Create one below.' : ''}
          </p>
        ) : (
          <TableBox label="Reward rules">
            <table aria-label="Reward rules">
              <thead>
                <tr>
                  <th scope="col">Event type</th>
                  <th scope="col">Reward</th>
                  <th scope="col">Active</th>
                  {write && <th scope="col">Change</th>}
                </tr>
              </thead>
              <tbody>
                {rules.map((rule) => (
                  <tr key={rule.id}>
                    <td>{rule.eventType}</td>
                    <td>{credits(rule.rewardCredits)}</td>
                    <td>{rule.active ? 'active' : 'inactive'}</td>
                    {write && (
                      <td>
                        <ActionForm
                          compact
                          action="updateRule"
                          title={`Edit reward of ${rule.eventType}`}
                          submitLabel="Save reward"
                          fixed={{ ruleId: rule.id }}
                          fields={[
                            {
                              name: 'rewardCredits',
                              label: `New reward for ${rule.eventType}`,
                              kind: 'credits',
                              min: 1,
                            },
                          ]}
                          onDone={reload}
                        />
                        <ActionForm
                          compact
                          action="updateRule"
                          title={`${rule.active ? 'Deactivate' : 'Activate'} ${rule.eventType}`}
                          submitLabel={rule.active ? 'Deactivate' : 'Activate'}
                          submitClass={rule.active ? 'danger' : undefined}
                          fixed={{ ruleId: rule.id, active: !rule.active }}
                          fields={[]}
                          danger={() =>
                            rule.active
                              ? {
                                  title: `Deactivate ${rule.eventType}?`,
                                  body:
                                    `Events of type ${rule.eventType} are rejected with unknown_or_inactive_rule ` +
                                    'until the rule is activated again; decisions already made do not change.',
                                  confirmLabel: 'Deactivate rule',
                                }
                              : undefined
                          }
                          onDone={reload}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
        {write && (
          <ActionForm
            action="createRule"
            title="New rule"
            submitLabel="Create rule"
            fixed={{ gameId: game.id }}
            fields={[
              {
                name: 'eventType',
                label: 'Event type',
                kind: 'text',
                rule: 'Start with a lower-case letter, then up to 63 lower-case letters, digits, _ . or -, like level.up.',
              },
              { name: 'rewardCredits', label: 'Reward (credits)', kind: 'credits', min: 1 },
            ]}
            onDone={reload}
          />
        )}
      </Section>
      <Section title="Keys">
        {shown?.issuedKey && (
          <div className="issued" role="status" tabIndex={-1} ref={issuedRef} aria-label="New key">
            <p>
              New {shown.kind} key, shown this once: <code data-testid="issued-key">{shown.issuedKey}</code>
            </p>
            <CopyButton value={shown.issuedKey} label="Copy key" />{' '}
            <button type="button" className="secondary" onClick={() => setIssued(undefined)}>
              Done, hide it
            </button>
          </div>
        )}
        {keys.length === 0 ? (
          <p className="empty">
            No keys yet.{' '}
            {write
              ? 'Create a secret key for your game server (it posts events) and a public key for your game client.'
              : ''}
          </p>
        ) : (
          <TableBox label="Keys">
            <table aria-label="Keys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Revoked</th>
                  {write && <th scope="col">Revoke</th>}
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td>{key.kind}</td>
                    <td>
                      <code>{key.publicKey ?? key.prefix}</code>
                    </td>
                    <td>{new Date(key.createdAt).toLocaleString()}</td>
                    <td>{key.revokedAt ? new Date(key.revokedAt).toLocaleString() : 'no'}</td>
                    {write && (
                      <td>
                        {!key.revokedAt && (
                          <ActionForm
                            compact
                            action="revokeKey"
                            title={`Revoke key ${key.name}`}
                            submitLabel={`Revoke ${key.name}`}
                            submitClass="danger"
                            fixed={{ keyId: key.id }}
                            fields={[]}
                            danger={() => ({
                              title: `Revoke key ${key.name}?`,
                              body:
                                `Every request with this ${key.kind} key is refused from now on` +
                                `${key.kind === 'secret' ? ' (401 invalid_key)' : ''}. This cannot be undone: ` +
                                'a revoked key stays revoked; create a new key to replace it.',
                              confirmLabel: 'Revoke key',
                            })}
                            onDone={() => {
                              if (issued?.id === key.id) setIssued(undefined);
                              reload();
                            }}
                          />
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
        {write && (
          <ActionForm
            action="issueKey"
            title="New key"
            submitLabel="Create key"
            fixed={{ gameId: game.id }}
            fields={[
              {
                name: 'name',
                label: 'Key name',
                kind: 'text',
                rule: 'Enter a name of 1 to 100 characters, without control characters.',
              },
              { name: 'kind', label: 'Kind', kind: 'select', options: ['secret', 'public'], initial: 'secret' },
            ]}
            onDone={(result) => {
              setIssued(result);
              reload();
            }}
          />
        )}
      </Section>
      <Section title="Players">
        {players.value && players.value.length === 0 ? (
          <p className="empty">
            No players yet: a player appears when your game server asks for a link intent for one of its in-game
            players.
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
                {(players.value ?? []).map((p) => (
                  <tr key={p.id}>
                    <td>{p.externalPlayerId}</td>
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
          <a href={`#/records/players/${game.id}`}>All players of this game</a>
        </p>
      </Section>
      <Section title="Link intents">
        <LinkIntents gameId={game.id} />
      </Section>
    </>
  );
}
