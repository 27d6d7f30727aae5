// The rule dry-run (GraphQL simulateRule): a proposed reward, active state or daily cap replayed over the game's
// stored decisions of the last days, before anything is saved; then "Save this change" applies what was previewed.
import { type FormEvent, useId, useState } from 'react';
import { EVENT_TYPE_REGEX } from '../../../../services/runtime/src/contracts/vocabulary.ts';
import {
  client,
  failureOf,
  type Game,
  type Rule,
  type RuleSimulation,
  runAction,
  type ServerFailure,
  SIMULATE_RULE,
} from '../../api.ts';
import { announceStart, credits, FailureText, parseCredits, Section, useClearOnAction } from '../../components.tsx';
import { sentenceOf } from '../../errors.ts';
import { type Proposal, Result } from './DryRunResult.tsx';

const WINDOWS = [1, 7, 14, 30] as const;
const DAY_MS = 86_400_000;

interface Problem {
  field: 'eventType' | 'reward' | 'cap' | undefined;
  failure?: ServerFailure;
  sentence: string;
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
