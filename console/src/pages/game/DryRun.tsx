// The rule dry-run (GraphQL simulateRule): a proposed reward, active state or daily cap replayed over the game's
// stored decisions of the last days, before anything is saved; then "Save this change" applies what was previewed.
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { EVENT_TYPE_REGEX } from '../../../../services/runtime/src/contracts/vocabulary.ts';
import {
  client,
  failureOf,
  type Game,
  type PlayerRecord,
  type Rule,
  type RuleSimulation,
  runAction,
  type ServerFailure,
  SIMULATE_RULE,
  type SimulationDecision,
} from '../../api.ts';
import {
  announceStart,
  credits,
  dollars,
  FailureText,
  Heading,
  parseCredits,
  Section,
  TableBox,
  useClearOnAction,
} from '../../components.tsx';
import { sentenceOf } from '../../errors.ts';
import { PlayerLink } from './LiveDecisions.tsx';
import { gamePlayers } from './records.ts';

const WINDOWS = [1, 7, 14, 30] as const;
const DAY_MS = 86_400_000;

interface Proposal {
  eventType: string;
  rewardCredits: number;
  active: boolean;
  dailyPlayerCapCredits: number;
  days: number;
}

interface Problem {
  field: 'eventType' | 'reward' | 'cap' | undefined;
  failure?: ServerFailure;
  sentence: string;
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

function Result({
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

/**
 * Edit a rule or the daily cap and see what the last days would have paid, then save. `rule` is the rule to start
 * from (undefined: a new event type).
 */
export function DryRun({
  game,
  rules,
  rule: startRule,
  write,
  reload,
}: {
  game: Game;
  rules: Rule[];
  rule: Rule | undefined;
  write: boolean;
  reload: () => void;
}) {
  const id = useId();
  const [eventType, setEventType] = useState(startRule?.eventType ?? rules[0]?.eventType ?? '');
  const ruleOf = (type: string) => rules.find((r) => r.eventType === type);
  const [reward, setReward] = useState(String(startRule?.rewardCredits ?? rules[0]?.rewardCredits ?? ''));
  const [active, setActive] = useState(startRule?.active ?? true);
  const [cap, setCap] = useState(credits(game.dailyPlayerCapCredits));
  const [days, setDays] = useState('7');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const [preview, setPreview] = useState<{ proposal: Proposal; result: RuleSimulation } | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [saving, setSaving] = useState(false);
  // Another form's action clears this one's messages, and a preview or a save clears theirs.
  useClearOnAction(id, () => {
    setProblem(undefined);
    setSaved(undefined);
  });

  const pickType = (type: string) => {
    setEventType(type);
    const existing = ruleOf(type);
    if (existing) {
      setReward(credits(existing.rewardCredits));
      setActive(existing.active);
    }
  };

  const run = async (event: FormEvent) => {
    event.preventDefault();
    announceStart(id);
    setProblem(undefined);
    setSaved(undefined);
    const type = eventType.trim();
    if (!EVENT_TYPE_REGEX.test(type)) {
      setProblem({
        field: 'eventType',
        sentence: 'Start with a lower-case letter, then up to 63 lower-case letters, digits, _ . or -, like level.up.',
      });
      return;
    }
    const parsedReward = parseCredits(reward, 1);
    if ('problem' in parsedReward) {
      setProblem({ field: 'reward', sentence: parsedReward.problem });
      return;
    }
    const parsedCap = parseCredits(cap, 0);
    if ('problem' in parsedCap) {
      setProblem({ field: 'cap', sentence: parsedCap.problem });
      return;
    }
    const proposal: Proposal = {
      eventType: type,
      rewardCredits: parsedReward.value,
      active,
      dailyPlayerCapCredits: parsedCap.value,
      days: Number(days),
    };
    const to = Date.now();
    setBusy(true);
    try {
      const result = await client.query<{ simulateRule: RuleSimulation | null }>({
        query: SIMULATE_RULE,
        variables: {
          input: {
            gameId: game.id,
            eventType: proposal.eventType,
            rewardCredits: proposal.rewardCredits,
            active: proposal.active,
            dailyPlayerCapCredits: proposal.dailyPlayerCapCredits,
            from: new Date(to - proposal.days * DAY_MS).toISOString(),
            to: new Date(to).toISOString(),
          },
        },
        fetchPolicy: 'network-only',
        errorPolicy: 'all',
      });
      if (result.error || !result.data?.simulateRule) throw result.error ?? new Error('No result.');
      setPreview({ proposal, result: result.data.simulateRule });
    } catch (thrown) {
      const failure = failureOf(thrown);
      const sentence =
        failure.code === 'SIMULATION_TOO_LARGE'
          ? 'This window holds too many decisions to replay at once: choose fewer days.'
          : sentenceOf(failure, { action: 'simulateRule' });
      setProblem({ field: undefined, failure, sentence });
    } finally {
      setBusy(false);
    }
  };

  const save = async () => {
    if (!preview) return;
    const { proposal } = preview;
    const rule = ruleOf(proposal.eventType);
    announceStart(id);
    setSaving(true);
    setProblem(undefined);
    try {
      if (!rule) {
        const created = await runAction('createRule', {
          gameId: game.id,
          eventType: proposal.eventType,
          rewardCredits: proposal.rewardCredits,
        });
        if (!proposal.active) await runAction('updateRule', { ruleId: created.id, active: false });
      } else if (rule.rewardCredits !== proposal.rewardCredits || rule.active !== proposal.active) {
        await runAction('updateRule', {
          ruleId: rule.id,
          rewardCredits: proposal.rewardCredits,
          active: proposal.active,
        });
      }
      if (proposal.dailyPlayerCapCredits !== game.dailyPlayerCapCredits) {
        await runAction('updateGame', { gameId: game.id, dailyPlayerCapCredits: proposal.dailyPlayerCapCredits });
      }
      setPreview(undefined);
      setSaved(
        `Saved: ${proposal.eventType} pays ${credits(proposal.rewardCredits)} credits${proposal.active ? '' : ' (inactive)'}, ` +
          `daily cap per player ${credits(proposal.dailyPlayerCapCredits)} credits.`,
      );
      reload();
    } catch (thrown) {
      const failure: ServerFailure =
        typeof thrown === 'object' && thrown && 'code' in thrown ? (thrown as ServerFailure) : failureOf(thrown);
      setProblem({
        field: undefined,
        failure,
        sentence: sentenceOf(failure, { action: rule ? 'updateRule' : 'createRule' }),
      });
    } finally {
      setSaving(false);
    }
  };

  const errorId = `${id}-error`;
  const fieldProps = (field: Problem['field']) => ({
    'aria-invalid': problem?.field === field ? true : undefined,
    'aria-describedby': problem?.field === field ? errorId : undefined,
  });
  const message = problem && (
    <p className="error" id={errorId} role="alert">
      {problem.failure ? <FailureText failure={problem.failure} /> : problem.sentence}
    </p>
  );
  return (
    <Section title="Try a change before saving it (dry run)" className="dry-run">
      <p className="hint">
        The game's stored decisions of the last days are decided again under your proposal, by the ledger's own decision
        function. Nothing is written until you save.
      </p>
      <form onSubmit={(e) => void run(e)} aria-label="Rule dry run" noValidate className="action dry-form">
        <div className="field">
          <label htmlFor={`${id}-type`}>Event type</label>
          <input
            id={`${id}-type`}
            type="text"
            list={`${id}-types`}
            autoComplete="off"
            value={eventType}
            onChange={(e) => pickType(e.target.value)}
            {...fieldProps('eventType')}
          />
          <datalist id={`${id}-types`}>
            {rules.map((r) => (
              <option key={r.id} value={r.eventType} />
            ))}
          </datalist>
          {problem?.field === 'eventType' && message}
        </div>
        <div className="field">
          <label htmlFor={`${id}-reward`}>Reward per event (credits)</label>
          <input
            id={`${id}-reward`}
            type="text"
            inputMode="numeric"
            autoComplete="off"
            value={reward}
            onChange={(e) => setReward(e.target.value)}
            {...fieldProps('reward')}
          />
          {problem?.field === 'reward' && message}
        </div>
        <div className="field">
          <label htmlFor={`${id}-active`} className="check">
            <input id={`${id}-active`} type="checkbox" checked={active} onChange={(e) => setActive(e.target.checked)} />{' '}
            Rule active
          </label>
        </div>
        <div className="field">
          <label htmlFor={`${id}-cap`}>Daily cap per player (credits)</label>
          <input
            id={`${id}-cap`}
            type="text"
            inputMode="numeric"
            autoComplete="off"
            value={cap}
            onChange={(e) => setCap(e.target.value)}
            {...fieldProps('cap')}
          />
          {problem?.field === 'cap' && message}
        </div>
        <div className="field">
          <label htmlFor={`${id}-days`}>Replay</label>
          <select id={`${id}-days`} value={days} onChange={(e) => setDays(e.target.value)}>
            {WINDOWS.map((n) => (
              <option key={n} value={String(n)}>
                {n === 1 ? 'the last day' : `the last ${n} days`}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={busy}>
          Preview
        </button>
        {problem && problem.field === undefined && message}
        {saved && (
          <p className="done" role="status">
            {saved}
          </p>
        )}
      </form>
      {preview && (
        <Result
          key={JSON.stringify(preview.proposal) + preview.result.to}
          result={preview.result}
          proposal={preview.proposal}
          rule={ruleOf(preview.proposal.eventType)}
          game={game}
          write={write}
          saving={saving}
          onSave={() => void save()}
        />
      )}
    </Section>
  );
}
