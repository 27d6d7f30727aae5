// The web console's pure modules (no browser, no service): money (credits, dollars, amounts checked before sending),
// the decision reasons in words, the records search kept in the URL, and the delivery filters a game's Webhooks tab
// keeps in its address.
import { amountAbove, credits, dollars, figure, parseCredits, roomLeft } from '../../console/src/money.ts';
import { REASONS, reasonLabel } from '../../console/src/pages/decisions/reasons.ts';
import {
  DEFAULT_PAGE_SIZE,
  firstPage,
  isExternalPlayerId,
  newerPage,
  olderPage,
  pageNumberOf,
  readSearch,
  searchHash,
  searchProblems,
  variablesOf,
} from '../../console/src/pages/decisions/url-state.ts';
import { deliveriesAddress, deliveriesFilterOf } from '../../console/src/pages/game/webhook-filter.ts';
import { CREDITS_MAX, DECISION_REASONS } from '../../services/runtime/src/contracts/vocabulary.ts';

const GAME = '3f2c0e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6';
const PLAYER = 'b1748125-0c1d-4e2f-8a3b-4c5d6e7f8091';

describe('money', () => {
  it('shows credits with separators and their nominal dollars (1,000 credits = $1)', () => {
    expect(credits(1_234_567)).toBe('1,234,567');
    expect(dollars(10_000)).toBe('$10.00');
    expect(dollars(25)).toBe('$0.025');
    expect(figure(10_000)).toBe('10,000 ($10.00)');
  });

  it('takes whole numbers, with or without separators, and refuses the rest with a sentence', () => {
    expect(parseCredits('1,000', 1)).toEqual({ value: 1000 });
    expect(parseCredits(' 1000 ', 1)).toEqual({ value: 1000 });
    expect(parseCredits('1.5', 1)).toEqual({ problem: 'Credits are whole numbers: leave out the decimal point.' });
    expect(parseCredits('ten', 1)).toEqual({ problem: 'Enter a whole number of credits, like 1,000 or 1000.' });
    expect(parseCredits('1,00', 1)).toEqual({ problem: 'Enter a whole number of credits, like 1,000 or 1000.' });
    expect(parseCredits('-5')).toEqual({ problem: 'Enter a number of credits of 0 or more.' });
    expect(parseCredits('', 1)).toEqual({ problem: 'Enter an amount, like 1,000.' });
    expect(parseCredits('0', 1)).toEqual({ problem: 'Enter an amount above 0 credits.' });
    expect(parseCredits(String(CREDITS_MAX))).toEqual({ value: CREDITS_MAX });
    expect(parseCredits(String(CREDITS_MAX + 1))).toEqual({ problem: 'At most 1,000,000,000,000 credits.' });
  });

  it('refuses an amount above a known limit with the room left, the first limit passed', () => {
    const limits = [
      { room: 5000, sentence: 'Above the ceiling.' },
      { room: 3000, sentence: 'Above the balance.' },
    ];
    expect(amountAbove({ amountCredits: 3000 }, limits)).toBeUndefined();
    expect(amountAbove({ amountCredits: 4000 }, limits)).toEqual({
      field: 'amountCredits',
      sentence: 'Above the balance. At most 3,000 ($3.00) more fits.',
    });
    expect(amountAbove({ amountCredits: 6000 }, limits)?.sentence).toBe(
      'Above the ceiling. At most 5,000 ($5.00) more fits.',
    );
    expect(roomLeft(0)).toBe('There is no room left.');
    expect(amountAbove({ amountCredits: 1 }, [{ room: -10, sentence: 'Full.' }])?.sentence).toBe(
      'Full. There is no room left.',
    );
  });
});

describe('reasons', () => {
  it('has words, a fix and a place for every reason of the API, and keeps an unknown code as it is', () => {
    expect(Object.keys(REASONS).sort()).toEqual([...DECISION_REASONS].sort());
    for (const reason of DECISION_REASONS) {
      expect(reasonLabel(reason)).not.toBe(reason);
      expect(REASONS[reason]!.what).toMatch(/\.$/);
    }
    expect(reasonLabel('game_budget_exhausted')).toBe('game budget used up');
    expect(reasonLabel('some_new_reason')).toBe('some_new_reason');
  });
});

describe('the records search in the URL', () => {
  it('reads and writes a search, leaving out empty parameters and the default page size', () => {
    const search = readSearch(`#/records?game=${GAME}&player=hero-9&status=rejected&size=50&junk=1`);
    expect(search).toEqual({ game: GAME, player: 'hero-9', status: 'rejected', size: 50 });
    expect(searchHash(search)).toBe(`#/records?game=${GAME}&player=hero-9&status=rejected&size=50`);
    expect(readSearch('#/records?size=7').size).toBe(DEFAULT_PAGE_SIZE);
    expect(searchHash({ size: DEFAULT_PAGE_SIZE })).toBe('#/records');
    expect(readSearch('#/records/events/x', GAME).game).toBe(GAME);
    expect(firstPage({ size: 25, after: 'c1', game: GAME })).toEqual({ size: 25, game: GAME });
  });

  it("takes a player id or, with a game, the game's own player id", () => {
    expect(isExternalPlayerId(PLAYER)).toBe(false);
    expect(isExternalPlayerId('hero-9')).toBe(true);
    expect(searchProblems({ size: 25, player: PLAYER })).toEqual({});
    expect(searchProblems({ size: 25, player: 'hero-9', game: GAME })).toEqual({});
    expect(searchProblems({ size: 25, player: 'hero-9' }).player).toBe(
      "A game's own player id (like hero-9) is looked up in one game: choose the game too.",
    );
    expect(searchProblems({ size: 25, player: 'bad\u0007id', game: GAME }).player).toMatch(/^Enter the game's own/);
    expect(searchProblems({ size: 25, event: 'hero-9' }).event).toBe(
      'An event id is the UUID the game server sent as eventId.',
    );
    expect(searchProblems({ size: 25, from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }).to).toBe(
      'The end of the window must be after its start.',
    );
  });

  it('numbers the pages from the newest: Older page counts up, Newer page down to the newest', () => {
    const first = readSearch('#/records?game=00000000-0000-4000-8000-000000000001');
    expect(pageNumberOf(first)).toBe(1);
    const second = olderPage(first, 'c1');
    expect(second).toMatchObject({ after: 'c1', before: undefined, page: 2 });
    expect(searchHash(second)).toContain('after=c1&page=2');
    const third = olderPage(readSearch(searchHash(second)), 'c2');
    expect(pageNumberOf(third)).toBe(3);
    expect(pageNumberOf(readSearch(searchHash(third)))).toBe(3);
    const back = newerPage(third, 'c3');
    expect(back).toMatchObject({ before: 'c3', after: undefined, page: 2 });
    expect(newerPage(back, 'c4')).toEqual(firstPage(back));
    expect(pageNumberOf(newerPage(back, 'c4'))).toBe(1);
    // A number without a cursor, or a cursor without a number, names no page number.
    expect(readSearch('#/records?page=4').page).toBeUndefined();
    expect(pageNumberOf(readSearch('#/records?after=c9'))).toBeUndefined();
    expect(readSearch('#/records?after=c9&page=0').page).toBeUndefined();
    expect(firstPage(third).page).toBeUndefined();
  });

  it('pages forward with first/after and backward with last/before', () => {
    expect(variablesOf({ size: 25, game: GAME, after: 'c1' })).toEqual({ gameId: GAME, first: 25, after: 'c1' });
    expect(variablesOf({ size: 50, before: 'c2', status: 'accepted' })).toEqual({
      status: 'accepted',
      last: 50,
      before: 'c2',
    });
  });
});

describe("the Webhooks tab's delivery filters in the address", () => {
  const ENDPOINT = '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c';
  const MESSAGE = '3f2c9a1b-7e6d-4c5b-a4f3-e2d1c0b9a8f7';

  it("keeps one endpoint's delivery filters in the Webhooks tab's address and reads them back", () => {
    const filter = {
      webhookId: MESSAGE,
      state: 'failed' as const,
      eventType: 'game.paused',
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-11-02T00:00:00.000Z',
    };
    const address = deliveriesAddress(GAME, ENDPOINT, filter);
    expect(address).toBe(
      `#/game/${GAME}/webhooks?endpoint=${ENDPOINT}&webhook-id=${MESSAGE}&state=failed&type=game.paused` +
        '&from=2026-11-01T00%3A00%3A00.000Z&to=2026-11-02T00%3A00%3A00.000Z',
    );
    expect(deliveriesFilterOf(address)).toEqual({ endpointId: ENDPOINT, filter });
    // No filter: the tab's own address, naming no endpoint.
    expect(deliveriesAddress(GAME, ENDPOINT, {})).toBe(`#/game/${GAME}/webhooks`);
    expect(deliveriesFilterOf(`#/game/${GAME}/webhooks`)).toEqual({ filter: {} });
    // A pasted id in upper case is the same id.
    expect(
      deliveriesFilterOf(
        `#/game/${GAME}/webhooks?endpoint=${ENDPOINT.toUpperCase()}&webhook-id=${MESSAGE.toUpperCase()}`,
      ),
    ).toEqual({ endpointId: ENDPOINT, filter: { webhookId: MESSAGE } });
  });

  it('leaves out what the filter form could not have written', () => {
    const base = `#/game/${GAME}/webhooks?endpoint=${ENDPOINT}`;
    expect(deliveriesFilterOf(`${base}&state=lost&type=game.deleted&webhook-id=3f2c9a1b&from=soon`)).toEqual({
      endpointId: ENDPOINT,
      filter: {},
    });
    // A window that ends before it starts keeps its start only.
    expect(deliveriesFilterOf(`${base}&from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z`).filter).toEqual({
      from: '2026-11-02T00:00:00.000Z',
    });
    // Filters without an endpoint filter nothing.
    expect(deliveriesFilterOf(`#/game/${GAME}/webhooks?state=failed`)).toEqual({ filter: {} });
  });
});
