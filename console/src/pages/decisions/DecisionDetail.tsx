// One decision, explained: the outcome in words, what fixes a rejection, the event as the game server sent it, and
// links to the player's other decisions. Opens beside the list on a wide screen and over it on a narrow one; the
// focus moves to it, Escape or Close gives it back to the row's Details button.
import { type KeyboardEvent, useEffect, useRef } from 'react';
import type { Snapshot } from '../../api.ts';
import { REASONS } from './reasons.ts';
import { type DecisionEdge, searchHash } from './search.ts';

export function DecisionDetail({
  edge,
  snapshot,
  size,
  onClose,
  amount,
}: {
  edge: DecisionEdge;
  snapshot: Snapshot;
  size: number;
  onClose: () => void;
  amount: (credits: number) => string;
}) {
  const panel = useRef<HTMLElement>(null);
  const node = edge.node;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the focus moves each time another decision opens
  useEffect(() => {
    panel.current?.focus();
  }, [node.id]);
  const game = snapshot.games.find((g) => g.id === node.gameId);
  const project = game ? snapshot.projects.find((p) => p.id === game.projectId) : undefined;
  const reason = node.reason ? REASONS[node.reason] : undefined;
  const fixLink =
    reason?.where === 'game' && game
      ? { href: `#/game/${game.id}`, text: `Open ${game.name}` }
      : reason?.where === 'project' && project
        ? { href: `#/project/${project.id}`, text: `Open ${project.name}` }
        : undefined;
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      onClose();
    }
  };
  const player = searchHash({ game: node.gameId, player: node.playerId, size });
  const playerRejected = searchHash({ game: node.gameId, player: node.playerId, status: 'rejected', size });
  const time = (iso: string) => `${new Date(iso).toLocaleString()} (${iso})`;
  return (
    <section
      aria-label="Record"
      className="card record decision-detail"
      ref={panel}
      tabIndex={-1}
      onKeyDown={onKeyDown}
    >
      <div className="detail-head">
        <h2>
          Decision: <span className={`decision-status ${node.status}`}>{node.status}</span>
        </h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      {node.status === 'accepted' ? (
        <p className="explain">
          The event matched an active rule and every check passed: the player was paid {amount(node.rewardCredits)} from
          the game’s budget.
        </p>
      ) : reason ? (
        <>
          <h3>Why it was rejected</h3>
          <p className="explain">{reason.what}</p>
          <h3>What fixes it</h3>
          <p className="explain">
            {reason.fix}
            {fixLink && (
              <>
                {' '}
                <a href={fixLink.href}>{fixLink.text}</a>
              </>
            )}
          </p>
          <p className="reason-code">
            Reason code: <code>{node.reason}</code>
          </p>
        </>
      ) : (
        <p className="explain">
          Rejected for a reason this console does not describe yet: <code>{node.reason}</code>.
        </p>
      )}
      <h3>The event</h3>
      <dl>
        <div>
          <dt>Player</dt>
          <dd>
            {edge.externalPlayerId} <span className="muted">(player id {node.playerId})</span>
          </dd>
        </div>
        <div>
          <dt>Event type</dt>
          <dd>{node.eventType}</dd>
        </div>
        <div>
          <dt>Event id</dt>
          <dd>
            <code>{node.eventId}</code>
          </dd>
        </div>
        <div>
          <dt>Occurred</dt>
          <dd>{time(node.occurredAt)}</dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd>{time(node.createdAt)}</dd>
        </div>
        <div>
          <dt>Game</dt>
          <dd>{game ? <a href={`#/game/${game.id}`}>{game.name}</a> : node.gameId}</dd>
        </div>
        <div>
          <dt>Reward</dt>
          <dd>{amount(node.rewardCredits)}</dd>
        </div>
        <div>
          <dt>Metadata</dt>
          <dd>
            Not stored: the ledger keeps the event’s fields above and a SHA-256 of the whole body (metadata included) to
            recognise a retry, not the metadata itself.
          </dd>
        </div>
        <div>
          <dt>Decision id</dt>
          <dd>
            <code>{node.id}</code>
          </dd>
        </div>
      </dl>
      <h3>This player</h3>
      <ul className="detail-links">
        <li>
          <a href={player}>All decisions of {edge.externalPlayerId}</a>
        </li>
        <li>
          <a href={playerRejected}>Rejected decisions of {edge.externalPlayerId}</a>
        </li>
      </ul>
    </section>
  );
}
