// One decision, explained: the outcome in words, what fixes a rejection, the event as the game server sent it (its
// metadata pretty-printed in a box that scrolls by itself), and links to the player's other decisions. Opens beside
// the list on a wide screen and over it on a narrow one; the focus moves to it, Escape or Close gives it back to the
// row's Details button.
import { type KeyboardEvent, useEffect, useRef } from 'react';
import type { Snapshot } from '../../api.ts';
import { fixAddress, REASONS } from './reasons.ts';
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
  const fixHref = fixAddress(node.reason, game);
  const fixLink = fixHref
    ? { href: fixHref, text: `Open ${reason?.where === 'project' && project ? project.name : game?.name}` }
    : undefined;
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      onClose();
    }
  };
  const player = searchHash({ game: node.gameId, player: node.playerId, size });
  const playerRejected = searchHash({ game: node.gameId, player: node.playerId, status: 'rejected', size });
  const metadata = metadataText(edge.metadata);
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
          <dt>Decision id</dt>
          <dd>
            <code>{node.id}</code> <a href={`#/decision/${node.id}`}>This decision’s page</a>
          </dd>
        </div>
      </dl>
      <h3>Metadata</h3>
      {metadata === undefined ? (
        <p className="explain">
          No metadata is stored for this event: none was sent, or it was decided before the ledger kept metadata.
        </p>
      ) : (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe)
        <section className="metadata-box" aria-label="Event metadata" tabIndex={0}>
          <pre>{metadata}</pre>
        </section>
      )}
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

/**
 * The event's metadata as the page shows it (the GraphQL JSONObject: an object, or null when none is stored), or
 * undefined when there is none: pretty-printed JSON, two spaces per level, members in RFC 8785's order (sorted by
 * UTF-16 code units, as the server sends them; JSON.stringify would put integer-like keys such as "10" first).
 */
export function metadataText(metadata: unknown): string | undefined {
  return metadata === null || metadata === undefined ? undefined : pretty(metadata, '');
}

function pretty(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => inner + pretty(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort();
    if (keys.length === 0) return '{}';
    const members = keys.map((key) => `${inner}${JSON.stringify(key)}: ${pretty(object[key], inner)}`);
    return `{\n${members.join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
