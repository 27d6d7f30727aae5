import { useEffect, useId, useRef, useState } from 'react';
import type { Game, Rule } from '../../api.ts';
import { ActionForm, credits, dollars, Reveal, Section, TableBox } from '../../components.tsx';
import { DryRun } from './DryRun.tsx';

export interface RulesSectionProps {
  game: Game;
  rules: Rule[];
  write: boolean;
  reload: () => void;
}

/** The game's reward rules, and (for writers) the forms that change them and create one. */
export function RulesSection({ game, rules, write, reload }: RulesSectionProps) {
  const gameId = game.id;
  const editorId = useId();
  const editor = useRef<HTMLDivElement>(null);
  // "Edit" opens the dry-run editor on that rule (a new editor each time), and moves the focus to it.
  const [editing, setEditing] = useState<{ rule: Rule | undefined; n: number }>({ rule: undefined, n: 0 });
  const edit = (rule: Rule) => setEditing((e) => ({ rule, n: e.n + 1 }));
  useEffect(() => {
    if (editing.n > 0) editor.current?.querySelector<HTMLElement>('input')?.focus();
  }, [editing]);
  return (
    <>
      <Section title="Reward rules">
        {rules.length === 0 ? (
          <p className="empty">
            No rules yet: events are rejected with <code>unknown_or_inactive_rule</code> until a rule rewards their
            type.
            {write ? ' Create one below.' : ''}
          </p>
        ) : (
          <TableBox label="Reward rules">
            <table aria-label="Reward rules">
              <thead>
                <tr>
                  <th scope="col">Event type</th>
                  <th scope="col">Reward</th>
                  <th scope="col">Active</th>
                  {write && <th scope="col">Change</th>}
                </tr>
              </thead>
              <tbody>
                {rules.map((rule) => (
                  <tr key={rule.id}>
                    <td>{rule.eventType}</td>
                    <td>
                      {credits(rule.rewardCredits)} <span className="usd">({dollars(rule.rewardCredits)})</span>
                    </td>
                    <td>{rule.active ? 'active' : 'inactive'}</td>
                    {write && (
                      <td>
                        <button
                          type="button"
                          className="secondary"
                          aria-label={`Edit ${rule.eventType}`}
                          aria-controls={editorId}
                          onClick={() => edit(rule)}
                        >
                          Edit
                        </button>{' '}
                        <ActionForm
                          compact
                          action="updateRule"
                          title={`${rule.active ? 'Deactivate' : 'Activate'} ${rule.eventType}`}
                          submitLabel={rule.active ? 'Deactivate' : 'Activate'}
                          submitClass={rule.active ? 'danger' : undefined}
                          fixed={{ ruleId: rule.id, active: !rule.active }}
                          fields={[]}
                          danger={() =>
                            rule.active
                              ? {
                                  title: `Deactivate ${rule.eventType}?`,
                                  body:
                                    `Events of type ${rule.eventType} are rejected with unknown_or_inactive_rule ` +
                                    'until the rule is activated again; decisions already made do not change.',
                                  confirmLabel: 'Deactivate rule',
                                }
                              : undefined
                          }
                          onDone={reload}
                        />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
        {write && (
          <Reveal label="New rule">
            <ActionForm
              action="createRule"
              title="New rule"
              submitLabel="Create rule"
              fixed={{ gameId }}
              fields={[
                {
                  name: 'eventType',
                  label: 'Event type',
                  kind: 'text',
                  rule: 'Start with a lower-case letter, then up to 63 lower-case letters, digits, _ . or -, like level.up.',
                },
                { name: 'rewardCredits', label: 'Reward (credits)', kind: 'credits', min: 1 },
              ]}
              onDone={reload}
            />
          </Reveal>
        )}
      </Section>
      {write && (
        <div id={editorId} ref={editor}>
          <DryRun key={editing.n} game={game} rules={rules} rule={editing.rule} write={write} reload={reload} />
        </div>
      )}
    </>
  );
}
