import { GAME_STATUSES } from '../../../../services/runtime/src/contracts/vocabulary.ts';
import type { Game } from '../../api.ts';
import { ActionForm, amountAbove, amountOf, Bar, credits, figure, Reveal, roomLeft } from '../../components.tsx';

export interface GameBudgetProps {
  game: Game;
  /** The project's budget not yet allocated to its games. */
  projectAvailable: number;
  write: boolean;
  reload: () => void;
}

/** The budget and spending bars, and (for writers) the forms that allocate to the game and change it. */
export function GameBudget({ game, projectAvailable, write, reload }: GameBudgetProps) {
  return (
    <>
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
        <div className="actions">
          <Reveal label="Allocate to game" buttonClass="primary">
            <ActionForm
              action="allocateGame"
              title="Allocate to game"
              submitLabel="Allocate"
              fixed={{ gameId: game.id }}
              fields={[
                { name: 'amountCredits', label: 'Amount to allocate to the game (credits)', kind: 'credits', min: 1 },
              ]}
              limit={(input) =>
                amountAbove(input, [
                  {
                    room: game.maxPayoutCredits - game.budgetCredits,
                    sentence: `This would take the game's budget above its ceiling of ${credits(game.maxPayoutCredits)}: raise the game's ceiling, or allocate less.`,
                  },
                  {
                    room: projectAvailable,
                    sentence:
                      'The project has less budget left for its games than this amount: allocate more to the project first, or allocate less.',
                  },
                ])
              }
              room={() => roomLeft(game.maxPayoutCredits - game.budgetCredits)}
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
          </Reveal>
          <Reveal label="Edit game">
            <ActionForm
              action="updateGame"
              title="Edit game"
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
          </Reveal>
        </div>
      )}
    </>
  );
}
