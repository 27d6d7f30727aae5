// The rule dry-run's result (DryRun.tsx): the sentence, the totals as decided and with the change, a chart and a table
// per UTC day, the decisions that would change (players by the game's own ids), and "Save this change".

import { useEffect, useId, useRef, useState } from 'react';
import type { Game, PlayerRecord, Rule, RuleSimulation, SimulationDecision } from '../../api.ts';
import { credits, dollars, Heading, TableBox } from '../../components.tsx';
import { PlayerLink } from './LiveDecisions.tsx';
import { gamePlayers } from './records.ts';

export interface Proposal {
  eventType: string;
  rewardCredits: number;
  active: boolean;
  dailyPlayerCapCredits: number;
  days: number;
}

const decisionText = (d: SimulationDecision) =>
  d.status === 'accepted' ? `accepted, ${credits(d.rewardCredits)} credits` : `rejected: ${d.reason ?? ''}`;

/** "25 credits more", "25 credits less", "the same". */
const difference = (value: number) =>
  value > 0 ? `${credits(value)} credits more` : value < 0 ? `${credits(-value)} credits less` : 'the same';

/** Per UTC day: what was paid and what the proposal would pay, as bars side by side (the table below has the figures). */
function DayChart({ result }: { result: RuleSimulation }) {
  const days = result.days;
  const max = Math.max(1, ...days.flatMap((d) => [d.stored.creditsSpent, d.proposed.creditsSpent]));
  const width = Math.max(320, days.length * 40);
  const height = 140;
  const plot = height - 24;
  const group = width / Math.max(1, days.length);
  const bar = Math.min(14, group / 3);
  return (
    <figure className="dry-chart" style={{ maxWidth: `${Math.min(40, width / 16)}rem` }}>
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Credits paid per day: as decided and with the change, ${days.length} days with decisions`}
      >
        <line x1={0} x2={width} y1={plot} y2={plot} stroke="#6b7280" />
        {days.map((d, i) => {
          const x = i * group + group / 2;
          const h = (value: number) => (value / max) * (plot - 6);
          return (
            <g key={d.day}>
              <rect
                x={x - bar - 1}
                y={plot - h(d.stored.creditsSpent)}
                width={bar}
                height={h(d.stored.creditsSpent)}
                fill="#6b7280"
              />
              <rect
                x={x + 1}
                y={plot - h(d.proposed.creditsSpent)}
                width={bar}
                height={h(d.proposed.creditsSpent)}
                fill="#0b57d0"
              />
              <text x={x} y={height - 6} textAnchor="middle" fontSize="11" fill="#1a1a1a">
                {d.day.slice(5, 10)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        <span className="swatch" style={{ background: '#6b7280' }} aria-hidden="true" /> as decided{' '}
        <span className="swatch" style={{ background: '#0b57d0' }} aria-hidden="true" /> with the change (highest day:{' '}
        {credits(max)} credits)
      </figcaption>
    </figure>
  );
}

export function Result({
  result,
  proposal,
  rule,
  game,
  write,
  onSave,
  saving,
}: {
  result: RuleSimulation;
  proposal: Proposal;
  rule: Rule | undefined;
  game: Game;
  write: boolean;
  onSave: () => void;
  saving: boolean;
}) {
  const ref = useRef<HTMLElement>(null);
  const headingId = useId();
  // The result takes the focus: it is what the preview opened.
  useEffect(() => ref.current?.focus(), []);
  // The changed decisions name their players by the game's own ids: the game's players are read once per result
  // (a player not among them keeps the start of its player id).
  const [players, setPlayers] = useState<PlayerRecord[] | undefined>();
  const flipCount = result.flips.length;
  useEffect(() => {
    if (flipCount === 0) return;
    let stopped = false;
    gamePlayers(game.id)
      .then((read) => {
        if (!stopped) setPlayers(read);
      })
      .catch(() => undefined);
    return () => {
      stopped = true;
    };
  }, [game.id, flipCount]);
  const delta = result.proposed.creditsSpent - result.stored.creditsSpent;
  const reasons = [
    ...new Set([...(result.stored.reasons ?? []), ...(result.proposed.reasons ?? [])].map((r) => r.reason)),
  ];
  const countOf = (list: RuleSimulation['stored']['reasons'], reason: string) =>
    list?.find((r) => r.reason === reason)?.count ?? 0;
  const changes = [
    rule
      ? rule.rewardCredits !== proposal.rewardCredits &&
        `the reward of ${proposal.eventType} from ${credits(rule.rewardCredits)} to ${credits(proposal.rewardCredits)} credits`
      : `a new rule: ${proposal.eventType} pays ${credits(proposal.rewardCredits)} credits`,
    rule &&
      rule.active !== proposal.active &&
      (proposal.active ? `${proposal.eventType} active` : `${proposal.eventType} inactive`),
    game.dailyPlayerCapCredits !== proposal.dailyPlayerCapCredits &&
      `the daily cap per player from ${credits(game.dailyPlayerCapCredits)} to ${credits(proposal.dailyPlayerCapCredits)} credits`,
  ].filter(Boolean) as string[];
  return (
    <section aria-labelledby={headingId} className="dry-result" tabIndex={-1} ref={ref} data-testid="dry-run-result">
      <Heading id={headingId}>
        What the last {proposal.days === 1 ? 'day' : `${proposal.days} days`} would have paid
      </Heading>
      <p data-testid="dry-run-summary">
        {result.considered === 0 ? (
          <>No decisions in this window: nothing to compare yet.</>
        ) : (
          <>
            {credits(result.considered)} {result.considered === 1 ? 'decision' : 'decisions'} replayed. As decided{' '}
            {result.considered === 1 ? 'it' : 'they'} paid{' '}
            <strong>{credits(result.stored.creditsSpent)} credits</strong> ({dollars(result.stored.creditsSpent)}); with
            the change {result.considered === 1 ? 'it' : 'they'} would have paid{' '}
            <strong>{credits(result.proposed.creditsSpent)} credits</strong> ({dollars(result.proposed.creditsSpent)}),{' '}
            {difference(delta)}. {credits(result.flipCount)} {result.flipCount === 1 ? 'decision' : 'decisions'} would
            change.
          </>
        )}
      </p>
      <TableBox label="Totals">
        <table aria-label="Totals">
          <thead>
            <tr>
              <th scope="col">Figure</th>
              <th scope="col">As decided</th>
              <th scope="col">With the change</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">Accepted</th>
              <td>{credits(result.stored.accepted)}</td>
              <td>{credits(result.proposed.accepted)}</td>
            </tr>
            <tr>
              <th scope="row">Rejected</th>
              <td>{credits(result.stored.rejected)}</td>
              <td>{credits(result.proposed.rejected)}</td>
            </tr>
            <tr>
              <th scope="row">Credits paid</th>
              <td>
                {credits(result.stored.creditsSpent)} ({dollars(result.stored.creditsSpent)})
              </td>
              <td>
                {credits(result.proposed.creditsSpent)} ({dollars(result.proposed.creditsSpent)})
              </td>
            </tr>
            {reasons.map((reason) => (
              <tr key={reason}>
                <th scope="row">
                  Rejected: <code>{reason}</code>
                </th>
                <td>{credits(countOf(result.stored.reasons, reason))}</td>
                <td>{credits(countOf(result.proposed.reasons, reason))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      {result.days.length > 0 && (
        <>
          <DayChart result={result} />
          <TableBox label="Per day">
            <table aria-label="Per day">
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col">Paid as decided</th>
                  <th scope="col">Paid with the change</th>
                  <th scope="col">Accepted as decided</th>
                  <th scope="col">Accepted with the change</th>
                </tr>
              </thead>
              <tbody>
                {result.days.map((d) => (
                  <tr key={d.day}>
                    <th scope="row">{d.day.slice(0, 10)}</th>
                    <td>{credits(d.stored.creditsSpent)}</td>
                    <td>{credits(d.proposed.creditsSpent)}</td>
                    <td>{credits(d.stored.accepted)}</td>
                    <td>{credits(d.proposed.accepted)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </>
      )}
      {result.flips.length > 0 && (
        <TableBox label="Decisions that would change">
          <table aria-label="Decisions that would change">
            <caption>
              Decisions that would change
              {result.flipCount > result.flips.length
                ? ` (the first ${result.flips.length} of ${result.flipCount})`
                : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Player</th>
                <th scope="col">Event type</th>
                <th scope="col">As decided</th>
                <th scope="col">With the change</th>
              </tr>
            </thead>
            <tbody>
              {result.flips.map((flip) => (
                <tr key={flip.id}>
                  <td>{new Date(flip.createdAt).toLocaleString()}</td>
                  <td>
                    <PlayerLink gameId={game.id} playerId={flip.playerId} players={players} />
                  </td>
                  <td>{flip.eventType}</td>
                  <td>{decisionText(flip.stored)}</td>
                  <td>{decisionText(flip.proposed)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {write && changes.length > 0 && (
        <div className="dry-save">
          <p>Saving changes {changes.join('; ')}. Decisions already made stay as they are.</p>
          <button type="button" onClick={onSave} disabled={saving}>
            Save this change
          </button>
        </div>
      )}
      {write && changes.length === 0 && <p className="hint">This is how the game is set now: nothing to save.</p>}
    </section>
  );
}
