// The web console's search box, as pure logic: the address of a search and of each object, the text refused before
// anything is sent, the grouping of what the search read found, the `/` shortcut, and where a rejection is fixed.
import { fixAddress } from '../../console/src/pages/decisions/reasons.ts';
import {
  focusesSearch,
  groupsOf,
  objectAddress,
  type SearchFound,
  searchAddress,
  searchTextOf,
  searchTextProblem,
} from '../../console/src/search.ts';
import { SEARCH_TEXT_MAX } from '../../services/runtime/src/contracts/console-search.ts';

const GAME = { id: '3f2c0e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', projectId: 'b1748125-0c1d-4e2f-8a3b-4c5d6e7f8091' };
const none: SearchFound = {
  text: 'x',
  organizations: [],
  projects: [],
  games: [],
  keys: [],
  players: [],
  decisions: [],
};

test('a search is an address, and the address gives the text back, trimmed', () => {
  expect(searchAddress('  hero 9 ')).toBe('#/search?q=hero%209');
  expect(searchTextOf('#/search?q=hero%209')).toBe('hero 9');
  expect(searchTextOf(searchAddress('a&b=c?d'))).toBe('a&b=c?d');
  expect(searchTextOf('#/search')).toBe('');
  expect(objectAddress.decision('d')).toBe('#/decision/d');
  expect(objectAddress.player('p')).toBe('#/player/p');
  expect(objectAddress.key('k')).toBe('#/key/k');
});

test('an empty or too long text is refused with a sentence; the server bound is the same', () => {
  expect(searchTextProblem('   ')).toBe('Type an id, a key prefix or part of a name.');
  expect(searchTextProblem('x'.repeat(SEARCH_TEXT_MAX))).toBeUndefined();
  expect(searchTextProblem(` ${'x'.repeat(SEARCH_TEXT_MAX)} `)).toBeUndefined();
  expect(searchTextProblem('x'.repeat(SEARCH_TEXT_MAX + 1))).toBe('At most 200 characters: no id is longer.');
});

test('results are grouped by kind, decisions and players first, empty groups left out, each a link', () => {
  expect(groupsOf(none, () => '')).toEqual([]);
  const found: SearchFound = {
    ...none,
    games: [{ id: GAME.id, name: 'Moon Quest', projectId: GAME.projectId, organizationId: 'o' }],
    players: [
      {
        player: {
          id: 'p1',
          gameId: GAME.id,
          organizationId: 'o',
          externalPlayerId: 'hero-9',
          creditsUserId: null,
          username: null,
          linkedAt: null,
          createdAt: '2026-11-28T12:00:00.000Z',
        },
        rewardedTodayCredits: 0,
        rewardedCredits: 0,
      },
    ],
    decisions: [
      {
        id: 'd1',
        eventId: 'e1',
        gameId: GAME.id,
        organizationId: 'o',
        playerId: 'p1',
        eventType: 'level.up',
        occurredAt: '2026-11-28T12:00:00.000Z',
        status: 'rejected',
        reason: 'daily_player_cap',
        rewardCredits: 0,
        createdAt: '2026-11-28T12:00:00.000Z',
      },
    ],
  };
  const groups = groupsOf(found, (id) => (id === GAME.id ? 'Moon Quest' : id));
  expect(groups.map((g) => [g.title, g.items.map((i) => [i.label, i.href])])).toEqual([
    ['Decisions', [['level.up: rejected (daily player cap reached)', '#/decision/d1']]],
    ['Players', [['hero-9', '#/player/p1']]],
    ['Games', [['Moon Quest', `#/game/${GAME.id}`]]],
  ]);
  expect(groups[1]!.items[0]!.detail).toBe('Moon Quest, player id p1');
});

test('`/` focuses the box unless the person is typing in a field', () => {
  expect(focusesSearch('/', { tagName: 'BODY' })).toBe(true);
  expect(focusesSearch('/', null)).toBe(true);
  expect(focusesSearch('/', { tagName: 'INPUT' })).toBe(false);
  expect(focusesSearch('/', { tagName: 'TEXTAREA' })).toBe(false);
  expect(focusesSearch('/', { tagName: 'SELECT' })).toBe(false);
  expect(focusesSearch('/', { tagName: 'DIV', isContentEditable: true })).toBe(false);
  expect(focusesSearch('?', { tagName: 'BODY' })).toBe(false);
});

test("a rejection's fix: the Rules tab for a missing rule, the game or project page for the others", () => {
  expect(fixAddress('unknown_or_inactive_rule', GAME)).toBe(`#/game/${GAME.id}/rules`);
  expect(fixAddress('game_budget_exhausted', GAME)).toBe(`#/game/${GAME.id}/overview`);
  expect(fixAddress('project_budget_exhausted', GAME)).toBe(`#/project/${GAME.projectId}`);
  expect(fixAddress('rate_limited', GAME)).toBeUndefined();
  expect(fixAddress(null, GAME)).toBeUndefined();
  expect(fixAddress('game_paused', undefined)).toBeUndefined();
});
