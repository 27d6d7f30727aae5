// What matters about a game's state at a glance: paused, no budget, budget used up, or less than 10 % left.
import type { Game } from '../api.ts';
import { ActionForm, creditsWithDollars } from '../components.tsx';

export interface GameState {
  paused: boolean;
  noBudget: boolean;
  exhausted: boolean;
  low: boolean;
  left: number;
}

export function gameState(game: Game): GameState {
  const left = Math.max(0, game.budgetCredits - game.spentCredits);
  return {
    paused: game.status === 'paused',
    noBudget: game.budgetCredits === 0,
    exhausted: game.budgetCredits > 0 && left === 0,
    low: left > 0 && left < game.budgetCredits * 0.1,
    left,
  };
}

/** Short labels beside a game in a list. */
export function GameBadges({ game }: { game: Game }) {
  const state = gameState(game);
  return (
    <>
      {state.paused && <span className="badge badge-warn">paused</span>}
      {state.noBudget && <span className="badge badge-warn">no budget</span>}
      {state.exhausted && <span className="badge badge-bad">budget used up</span>}
      {state.low && <span className="badge badge-warn">under 10 % left</span>}
    </>
  );
}

/** The game page's banners: what stops or will soon stop rewards, and what to do about it. */
export function GameBanners({ game, write, reload }: { game: Game; write: boolean; reload: () => void }) {
  const state = gameState(game);
  return (
    <>
      {state.paused && (
        <div className="banner banner-warn" data-testid="banner-paused">
          <p>
            <strong>This game is paused.</strong> Every event is rejected with <code>game_paused</code> and players earn
            nothing until it is resumed.
          </p>
          {write && (
            <ActionForm
              compact
              action="updateGame"
              title="Resume game"
              fixed={{ gameId: game.id, status: 'active' }}
              fields={[]}
              onDone={reload}
            />
          )}
        </div>
      )}
      {state.noBudget && (
        <p className="banner banner-warn" data-testid="banner-budget">
          <strong>This game has no budget yet.</strong> Every event is rejected with <code>game_budget_exhausted</code>
          {write ? ': allocate to it with "Allocate to game" (Overview).' : ' until an owner or admin allocates to it.'}
        </p>
      )}
      {state.exhausted && (
        <p className="banner banner-bad" data-testid="banner-budget">
          <strong>The budget is used up</strong>: all {creditsWithDollars(game.budgetCredits)} spent. Events are
          rejected with <code>game_budget_exhausted</code>
          {write
            ? ' until you allocate more ("Allocate to game", Overview).'
            : ' until an owner or admin allocates more.'}
        </p>
      )}
      {state.low && (
        <p className="banner banner-warn" data-testid="banner-budget">
          <strong>Less than 10 % of the budget is left</strong>: {creditsWithDollars(state.left)} of{' '}
          {creditsWithDollars(game.budgetCredits)}.
          {write ? ' Allocate more ("Allocate to game", Overview) before it runs out.' : ''}
        </p>
      )}
    </>
  );
}
