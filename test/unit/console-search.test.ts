// The web console's search box, as pure logic: the address of a search and of each object, the text refused before
// anything is sent, the grouping of what the search read found, the `/` shortcut, and where a rejection is fixed.
import { formOf, searchOf, summaryOf } from '../../console/src/pages/decisions/form-state.ts';
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

describe("the decision search's form", () => {
  it('counts what is shown, never as the total when more pages exist', () => {
    expect(summaryOf(0, 0, false)).toBe('No decisions.');
    expect(summaryOf(2, 2, false)).toBe('2 decisions matching 2 filters.');
    expect(summaryOf(1, 1, false)).toBe('1 decision matching 1 filter.');
    expect(summaryOf(25, 2, true)).toBe('25 shown matching 2 filters; more on other pages.');
    expect(summaryOf(0, 1, true)).toBe('No decisions matching 1 filter on this page.');
  });

  it('turns the typed form into the search and back: trimmed, a player id in lower case, times as instants', () => {
    const form = formOf({ size: 50 });
    const typed = {
      ...form,
      game: ` ${GAME.id} `,
      player: 'B1748125-0C1D-4E2F-8A3B-4C5D6E7F8091',
      event: 'A1748125-0C1D-4E2F-8A3B-4C5D6E7F8091',
      from: '2026-11-28T12:30',
    };
    const search = searchOf(typed);
    expect(search).toMatchObject({
      game: GAME.id,
      player: 'b1748125-0c1d-4e2f-8a3b-4c5d6e7f8091',
      event: 'a1748125-0c1d-4e2f-8a3b-4c5d6e7f8091',
      from: new Date('2026-11-28T12:30').toISOString(),
      size: 50,
    });
    // The game's own id stays exactly as typed; a text that is no time stays as typed (and is refused later).
    expect(searchOf({ ...form, player: ' Hero-9 ', to: 'soon' })).toMatchObject({ player: 'Hero-9', to: 'soon' });
    expect(formOf(search).from).toBe('2026-11-28T12:30');
  });
});
