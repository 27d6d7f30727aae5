import { useEffect, useMemo, useRef, useState } from 'react';
import { canWrite, type EventRecord, type PlayerRecord, type Snapshot } from '../api.ts';
import { Section, useTitle } from '../components.tsx';
import { useLiveDecisions } from '../live.ts';
import { usePoll, useThrottled } from '../poll.ts';
import { eventCommand } from './FirstEvent.tsx';
import { GameBudget } from './game/Budget.tsx';
import { ChartsSection } from './game/ChartsSection.tsx';
import { GameClockSection, RecentChangesSection } from './game/Clock.tsx';
import { GameFigures, GameHeadline } from './game/Headline.tsx';
import { type IssuedKey, KeysSection } from './game/Keys.tsx';
import { LiveDecisionsSection } from './game/LiveDecisions.tsx';
import { LinkIntentsSection, PlayersSection } from './game/Players.tsx';
import { RulesSection } from './game/Rules.tsx';
import { newest, page } from './game/records.ts';
import { WebhooksSection } from './game/Webhooks.tsx';
import type { DeliveriesFilter } from './game/webhook-filter.ts';

export const GAME_TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'charts', label: 'Charts' },
  { id: 'rules', label: 'Rules' },
  { id: 'keys', label: 'Keys' },
  { id: 'players', label: 'Players' },
  { id: 'webhooks', label: 'Webhooks' },
] as const;
type TabId = (typeof GAME_TABS)[number]['id'];

/**
 * One game: its headline figures first, then tabs (each its own address, #/game/<id>/<tab>): overview (budget and
 * live decisions), charts, rules (with the dry-run), keys, players and link intents.
 */
export default function GamePage({
  snapshot,
  gameId,
  tab: tabName,
  deliveries,
  reload,
}: {
  snapshot: Snapshot;
  gameId: string;
  tab: string | undefined;
  /** The Webhooks tab's delivery filters, from the address's query. */
  deliveries?: DeliveriesFilter | undefined;
  reload: () => void;
}) {
  const tab: TabId = GAME_TABS.find((t) => t.id === tabName)?.id ?? 'overview';
  const game = snapshot.games.find((g) => g.id === gameId);
  const [issued, setIssued] = useState<IssuedKey[]>([]);
  const [testPlayer, setTestPlayer] = useState<string | undefined>();
  // Decisions arrive over the subscription while it works; the newest 20 are read at once, again once the gateway
  // says the subscription is live (what was decided before it), and then polled every second only while it does not
  // work (every 30 s otherwise, as a safety net).
  const live = useLiveDecisions(gameId);
  const events = usePoll(() => page('events', gameId, 20) as Promise<EventRecord[]>, gameId, 1000, 30_000, {
    live: live.mode === 'live',
    nudge: live.subscribed,
  });
  const decisions = useMemo(() => newest(live.received, events.value ?? [], 20), [live.received, events.value]);
  const players = usePoll(() => page('players', gameId, 20) as Promise<PlayerRecord[]>, gameId, 5000);
  // A new decision changes the game's spending: the figures (snapshot) are read again, at most once a second.
  const reloadSoon = useThrottled(reload, 1000);
  const loaded = events.value !== undefined;
  const latest = decisions[0]?.id ?? '';
  const seen = useRef<string | undefined>(undefined);
  const [changes, setChanges] = useState(0);
  useEffect(() => {
    if (!loaded) return;
    if (seen.current !== undefined && latest !== seen.current) {
      reloadSoon();
      setChanges((n) => n + 1);
    }
    seen.current = latest;
  }, [loaded, latest, reloadSoon]);
  // On a phone the tabs are one row that scrolls sideways inside its list: the current one is scrolled into view,
  // with a little of its neighbour showing, so that the row is seen to go on.
  const tabList = useRef<HTMLUListElement>(null);
  const newKeyShown = issued.length > 0;
  const found = game !== undefined;
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs again when the tab, the game or a tab's label change
  useEffect(() => {
    const list = tabList.current;
    const current = list?.querySelector('a[aria-current="page"]');
    if (!list || !current) return;
    const box = list.getBoundingClientRect();
    const item = current.getBoundingClientRect();
    const margin = 24;
    if (item.left < box.left) list.scrollLeft -= box.left - item.left + margin;
    else if (item.right > box.right) list.scrollLeft += item.right - box.right + margin;
  }, [tab, gameId, newKeyShown, found]);
  const tabLabel = GAME_TABS.find((t) => t.id === tab)?.label ?? '';
  useTitle(game ? `Game ${game.name}${tab === 'overview' ? '' : `: ${tabLabel}`}` : 'Game not found');
  if (!game) return <p role="alert">This game does not exist or you are not a member of its organization.</p>;
  const org = snapshot.organizations.find((o) => o.id === game.organizationId);
  const project = snapshot.projects.find((p) => p.id === game.projectId);
  const write = canWrite(org?.role);
  const rules = snapshot.rules.filter((r) => r.gameId === game.id);
  const keys = snapshot.keys.filter((k) => k.gameId === game.id);
  const projectGames = snapshot.games.filter((g) => g.projectId === game.projectId);
  const projectAvailable = (project?.budgetCredits ?? 0) - projectGames.reduce((sum, g) => sum + g.budgetCredits, 0);
  // A one-time banner goes as soon as its key is revoked; the newest secret shown feeds the first event's command.
  const shown = issued.filter((r) => r.issuedKey && !keys.find((k) => k.id === r.id)?.revokedAt);
  const shownSecret = shown.find((r) => r.kind === 'secret')?.issuedKey ?? undefined;
  // The first event's player: a test player just linked, else the newest linked player, else the newest player.
  const linkedPlayer = players.value?.find((p) => p.creditsUserId !== null)?.id;
  const firstPlayer = testPlayer ?? linkedPlayer ?? players.value?.[0]?.id;
  const firstPlayerLinked = testPlayer !== undefined || linkedPlayer !== undefined;
  const activeRule = rules.find((r) => r.active);
  const sendCommand = eventCommand(
    window.location.origin,
    shownSecret ?? '$SECRET_KEY',
    firstPlayer ?? '$PLAYER_ID',
    activeRule?.eventType ?? 'level.up',
  );
  return (
    <>
      <GameHeadline game={game} org={org} project={project} write={write} reload={reload} />
      <GameFigures game={game} changes={changes} live={live.mode === 'live'} />
      <nav aria-label="Game sections" className="tabs">
        <ul className="tab-list" ref={tabList}>
          {GAME_TABS.map((t) => (
            <li key={t.id}>
              <a href={`#/game/${game.id}/${t.id}`} aria-current={t.id === tab ? 'page' : undefined}>
                {t.label}
                {t.id === 'keys' && shown.length > 0 ? ' (new key)' : ''}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div className="tab-panel" data-testid={`tab-${tab}`}>
        {tab === 'overview' && (
          <>
            <Section title="Budget">
              <GameBudget game={game} projectAvailable={projectAvailable} write={write} reload={reload} />
            </Section>
            <LiveDecisionsSection
              gameId={game.id}
              live={live}
              decisions={decisions}
              loaded={loaded}
              error={events.error}
              keys={keys}
              rules={rules}
              shownSecret={shownSecret}
              firstPlayer={firstPlayer}
              firstPlayerLinked={firstPlayerLinked}
              write={write}
              onTestPlayer={(result) => setTestPlayer(result.id)}
              players={players.value}
            />
            <GameClockSection game={game} write={write} reload={reload} />
            <RecentChangesSection snapshot={snapshot} game={game} allowed={write} role={org?.role} />
          </>
        )}
        {tab === 'charts' && (
          <ChartsSection
            game={game}
            live={live}
            shownSecret={shownSecret}
            firstPlayer={firstPlayer}
            sendCommand={sendCommand}
          />
        )}
        {tab === 'rules' && <RulesSection game={game} rules={rules} write={write} reload={reload} />}
        {tab === 'keys' && (
          <KeysSection
            gameId={game.id}
            keys={keys}
            write={write}
            reload={reload}
            shown={shown}
            addIssued={(result) => setIssued((all) => [result, ...all.filter((r) => r.id !== result.id)])}
            hideIssued={(id) => setIssued((all) => all.filter((r) => r.id !== id))}
          />
        )}
        {tab === 'players' && (
          <>
            <PlayersSection gameId={game.id} write={write} players={players.value} />
            <LinkIntentsSection gameId={game.id} />
          </>
        )}
        {tab === 'webhooks' && (
          <WebhooksSection gameId={game.id} write={write} deliveries={deliveries ?? { filter: {} }} />
        )}
      </div>
    </>
  );
}
