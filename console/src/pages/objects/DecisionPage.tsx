// A decision's own page (#/decision/<id>): the outcome in words and what fixes a rejection, its timeline (occurred,
// received and decided; replays are not counted by the ledger, and the page says so), the event, its metadata, and
// the player's other decisions, each a link to its own page.
import type { Snapshot } from '../../api.ts';
import { creditsWithDollars, FailureAlert, Section, useTitle, when } from '../../components.tsx';
import { objectAddress } from '../../search.ts';
import { metadataText } from '../decisions/DecisionDetail.tsx';
import { fixAddress, REASONS, reasonLabel } from '../decisions/reasons.ts';
import { searchHash } from '../decisions/search.ts';
import { useDecisions, useFound } from './found.ts';

export default function DecisionPage({ snapshot, id }: { snapshot: Snapshot; id: string }) {
  const { found, failure, loading } = useFound(id);
  const decision = found?.decisions.find((d) => d.id === id.toLowerCase());
  useTitle(decision ? `Decision ${decision.eventType}: ${decision.status}` : 'Decision');
  // The stored event (metadata, the game's own player id) and the player's newest decisions.
  const event = useDecisions({ gameId: decision?.gameId, eventId: decision?.eventId, first: 1 }, !decision);
  const others = useDecisions({ gameId: decision?.gameId, playerId: decision?.playerId, first: 11 }, !decision);
  if (loading) return <p>Loading…</p>;
  if (failure) return <FailureAlert failure={failure} />;
  if (!decision) {
    return (
      <>
        <h1>Decision</h1>
        <p role="alert">No decision {id} in your organizations.</p>
      </>
    );
  }
  const game = snapshot.games.find((g) => g.id === decision.gameId);
  const edge = event.edges?.[0];
  const playerName = edge?.externalPlayerId ?? decision.playerId;
  const reason = decision.reason ? REASONS[decision.reason] : undefined;
  const fixHref = fixAddress(decision.reason, game);
  const time = (iso: string) => `${when(iso)} (${iso})`;
  const otherEdges = (others.edges ?? []).filter((e) => e.node.id !== decision.id).slice(0, 10);
  return (
    <>
      <h1>
        Decision: {decision.eventType}, <span className={`decision-status ${decision.status}`}>{decision.status}</span>
      </h1>
      <p className="explain">
        {decision.status === 'accepted'
          ? `Every check passed: ${playerName} was paid ${creditsWithDollars(decision.rewardCredits)}.`
          : (reason?.what ?? `Rejected: ${decision.reason}.`)}
      </p>
      {reason && (
        <p className="explain">
          <strong>What fixes it:</strong> {reason.fix}
          {fixHref && game && (
            <>
              {' '}
              <a href={fixHref}>Open {game.name}</a>
            </>
          )}
        </p>
      )}
      <Section title="Timeline">
        <ol className="timeline">
          <li>
            <strong>Occurred</strong> {time(decision.occurredAt)}: the game server’s clock.
          </li>
          <li>
            <strong>Received and decided</strong> {time(decision.createdAt)}: the ledger decides in the transaction that
            stores the event, so both are one instant.
          </li>
          <li>
            <strong>Replays seen</strong>: not stored. The game server may send the same event id again; each replay is
            answered with this decision and is not counted.
          </li>
        </ol>
      </Section>
      <Section title="The event">
        <dl className="facts">
          <div>
            <dt>Player</dt>
            <dd>
              <a href={objectAddress.player(decision.playerId)}>{playerName}</a>
            </dd>
          </div>
          <div>
            <dt>Game</dt>
            <dd>{game ? <a href={`#/game/${game.id}`}>{game.name}</a> : decision.gameId}</dd>
          </div>
          <div>
            <dt>Outcome</dt>
            <dd>
              {decision.status}
              {decision.reason ? `: ${reasonLabel(decision.reason)}` : ''}, {creditsWithDollars(decision.rewardCredits)}
            </dd>
          </div>
          <div>
            <dt>Event id</dt>
            <dd>
              <code>{decision.eventId}</code>
            </dd>
          </div>
          <div>
            <dt>Decision id</dt>
            <dd>
              <code>{decision.id}</code>
            </dd>
          </div>
        </dl>
        {edge?.metadata ? (
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe)
          <section className="metadata-box" aria-label="Event metadata" tabIndex={0}>
            <pre>{metadataText(edge.metadata)}</pre>
          </section>
        ) : (
          <p>{edge ? 'No metadata is stored for this event.' : ''}</p>
        )}
      </Section>
      <Section title={`Other decisions of ${playerName}`}>
        {others.failure && <FailureAlert failure={others.failure} />}
        {otherEdges.length === 0 && others.edges && <p>None: this is the player’s only decision.</p>}
        <ul className="found-list">
          {otherEdges.map((e) => (
            <li key={e.node.id}>
              <a href={objectAddress.decision(e.node.id)}>
                {e.node.eventType}: {e.node.status}
                {e.node.reason ? ` (${reasonLabel(e.node.reason)})` : ''}
              </a>{' '}
              <span className="muted">{when(e.node.createdAt)}</span>
            </li>
          ))}
        </ul>
        <p>
          <a href={searchHash({ game: decision.gameId, player: decision.playerId, size: 25 })}>
            Every decision of {playerName} in Records
          </a>
        </p>
      </Section>
    </>
  );
}
