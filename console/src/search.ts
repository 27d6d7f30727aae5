// The console's search box (GraphQL `search`, docs/console-ui.md): its read, the address of a search and of each
// object found, and how the results are grouped. Pure except for the query text; the unit tests read it.
import { gql } from '@apollo/client';
import { SEARCH_TEXT_MAX } from '../../services/runtime/src/contracts/console-search.ts';
import { reasonLabel } from './pages/decisions/reasons.ts';

export const SEARCH = gql`
  query ConsoleSearch($text: String!) {
    search(text: $text) {
      text
      organizations { id name }
      projects { id name organizationId }
      games { id name projectId organizationId }
      keys { key { id name kind prefix gameId createdAt revokedAt } decisionsToday lastUsedToday }
      players {
        player { id gameId organizationId externalPlayerId creditsUserId username linkedAt createdAt }
        rewardedTodayCredits
        rewardedCredits
      }
      decisions { id eventId gameId organizationId playerId eventType occurredAt status reason rewardCredits createdAt }
    }
  }
`;

// The shapes the read answers (as in api.ts; declared here so that this module stays free of the app's client).
export interface KeyFound {
  key: {
    id: string;
    name: string;
    kind: 'public' | 'secret';
    prefix: string;
    gameId: string;
    createdAt: string;
    revokedAt: string | null;
  };
  decisionsToday: number;
  lastUsedToday: string | null;
}
export interface PlayerFound {
  player: {
    id: string;
    gameId: string;
    organizationId: string;
    createdAt: string;
    externalPlayerId: string;
    creditsUserId: string | null;
    username: string | null;
    linkedAt: string | null;
  };
  rewardedTodayCredits: number;
  rewardedCredits: number;
}
export interface DecisionFound {
  id: string;
  eventId: string;
  gameId: string;
  organizationId: string;
  playerId: string;
  eventType: string;
  occurredAt: string;
  status: 'accepted' | 'rejected';
  reason: string | null;
  rewardCredits: number;
  createdAt: string;
}
export interface SearchFound {
  text: string;
  organizations: Array<{ id: string; name: string }>;
  projects: Array<{ id: string; name: string; organizationId: string }>;
  games: Array<{ id: string; name: string; projectId: string; organizationId: string }>;
  keys: KeyFound[];
  players: PlayerFound[];
  decisions: DecisionFound[];
}
export interface SearchResult {
  search: SearchFound | null;
}

/** The address of a search: `#/search?q=<text>` (the text trimmed). */
export const searchAddress = (text: string) => `#/search?q=${encodeURIComponent(text.trim())}`;

/** The text of a search address, or "" when the hash holds none. */
export function searchTextOf(hash: string): string {
  const query = hash.split('?')[1] ?? '';
  return (new URLSearchParams(query).get('q') ?? '').trim();
}

/** The problem with a text the box is about to search, or undefined when it may be sent. */
export function searchTextProblem(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return 'Type an id, a key prefix or part of a name.';
  if (trimmed.length > SEARCH_TEXT_MAX) return `At most ${SEARCH_TEXT_MAX} characters: no id is longer.`;
  return undefined;
}

/** Each object's own page. */
export const objectAddress = {
  organization: (id: string) => `#/org/${id}`,
  project: (id: string) => `#/project/${id}`,
  game: (id: string) => `#/game/${id}`,
  key: (id: string) => `#/key/${id}`,
  player: (id: string) => `#/player/${id}`,
  decision: (id: string) => `#/decision/${id}`,
};

export interface FoundItem {
  id: string;
  href: string;
  label: string;
  detail: string;
}

export interface FoundGroup {
  kind: keyof typeof objectAddress;
  title: string;
  items: FoundItem[];
}

/** The names of the projects and organizations results sit in (from the snapshot), to tell same names apart. */
export interface Places {
  project: (projectId: string) => string | undefined;
  organization: (organizationId: string) => string | undefined;
}

const NO_PLACES: Places = { project: () => undefined, organization: () => undefined };

/** "Org › Project", each name or, unknown, the start of its id. */
const placeOf = (places: Places, organizationId: string, projectId?: string) =>
  [
    places.organization(organizationId) ?? `organization ${organizationId.slice(0, 8)}`,
    ...(projectId ? [places.project(projectId) ?? `project ${projectId.slice(0, 8)}`] : []),
  ].join(' › ');

/** Items that still read alike (same label and detail) end with the start of their id. */
function distinguished(items: FoundItem[]): FoundItem[] {
  const seen = new Map<string, number>();
  for (const item of items)
    seen.set(`${item.label}\n${item.detail}`, (seen.get(`${item.label}\n${item.detail}`) ?? 0) + 1);
  return items.map((item) =>
    (seen.get(`${item.label}\n${item.detail}`) ?? 0) > 1
      ? { ...item, detail: `${item.detail}, id ${item.id.slice(0, 8)}` }
      : item,
  );
}

/** The results as the page lists them: one group per kind with matches, decisions and players first. */
export function groupsOf(
  found: SearchFound,
  gameName: (gameId: string) => string,
  places: Places = NO_PLACES,
): FoundGroup[] {
  const groups: FoundGroup[] = [
    {
      kind: 'decision',
      title: 'Decisions',
      items: found.decisions.map((d) => ({
        id: d.id,
        href: objectAddress.decision(d.id),
        label: `${d.eventType}: ${d.status}${d.reason ? ` (${reasonLabel(d.reason)})` : ''}`,
        detail: `${gameName(d.gameId)}, event id ${d.eventId}`,
      })),
    },
    {
      kind: 'player',
      title: 'Players',
      items: found.players.map(({ player }) => ({
        id: player.id,
        href: objectAddress.player(player.id),
        label: player.externalPlayerId,
        detail: `${gameName(player.gameId)}, player id ${player.id}`,
      })),
    },
    {
      kind: 'key',
      title: 'Keys',
      items: found.keys.map(({ key }) => ({
        id: key.id,
        href: objectAddress.key(key.id),
        label: `${key.name} (${key.prefix}…)`,
        detail: `${gameName(key.gameId)}, ${key.kind}${key.revokedAt ? ', revoked' : ''}`,
      })),
    },
    {
      kind: 'game',
      title: 'Games',
      items: found.games.map((g) => ({
        id: g.id,
        href: objectAddress.game(g.id),
        label: g.name,
        detail: `game in ${placeOf(places, g.organizationId, g.projectId)}`,
      })),
    },
    {
      kind: 'project',
      title: 'Projects',
      items: found.projects.map((p) => ({
        id: p.id,
        href: objectAddress.project(p.id),
        label: p.name,
        detail: `project in ${placeOf(places, p.organizationId)}`,
      })),
    },
    {
      kind: 'organization',
      title: 'Organizations',
      items: found.organizations.map((o) => ({
        id: o.id,
        href: objectAddress.organization(o.id),
        label: o.name,
        detail: 'organization',
      })),
    },
  ];
  return groups
    .filter((group) => group.items.length > 0)
    .map((group) => ({ ...group, items: distinguished(group.items) }));
}

/** Whether a key press outside a field should focus the search box: `/`, as on many sites. */
export function focusesSearch(key: string, target: { tagName?: string; isContentEditable?: boolean } | null): boolean {
  if (key !== '/') return false;
  const tag = target?.tagName?.toLowerCase();
  return !(tag === 'input' || tag === 'textarea' || tag === 'select' || target?.isContentEditable);
}
