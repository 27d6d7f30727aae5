import { Suspense } from 'react';
import type { Game } from '../../api.ts';
import { Section } from '../../components.tsx';
import type { LiveDecisions } from '../../live.ts';
import { lazyPage } from '../../page-loading.tsx';
import { Command } from '../FirstEvent.tsx';

const Charts = lazyPage(() => import('../Charts.tsx'));

export interface ChartsSectionProps {
  game: Game;
  live: LiveDecisions;
  /** The secret key shown once, if any. */
  shownSecret: string | undefined;
  firstPlayer: string | undefined;
  /** The command that sends an event (shown while the charts are empty). */
  sendCommand: string;
}

/** The game's charts (loaded on demand), with how to send an event while they are empty. */
export function ChartsSection({ game, live, shownSecret, firstPlayer, sendCommand }: ChartsSectionProps) {
  return (
    <Section title="Charts">
      <Suspense fallback={<p>Loading charts…</p>}>
        <Charts
          game={game}
          live={live.mode === 'live'}
          // A decision over the socket, or the gateway's word that the subscription is live: read again.
          received={live.count + live.subscribed}
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
  );
}
