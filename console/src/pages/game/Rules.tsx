import type { Rule } from '../../api.ts';
import { ActionForm, credits, Section, TableBox } from '../../components.tsx';

export interface RulesSectionProps {
  gameId: string;
  rules: Rule[];
  write: boolean;
  reload: () => void;
}

/** The game's reward rules, and (for writers) the forms that change them and create one. */
export function RulesSection({ gameId, rules, write, reload }: RulesSectionProps) {
  return (
    <Section title="Reward rules">
      {rules.length === 0 ? (
        <p className="empty">
          No rules yet: events are rejected with <code>unknown_or_inactive_rule</code> until a rule rewards their type.
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
                  <td>{credits(rule.rewardCredits)}</td>
                  <td>{rule.active ? 'active' : 'inactive'}</td>
                  {write && (
                    <td>
                      <ActionForm
                        compact
                        action="updateRule"
                        title={`Edit reward of ${rule.eventType}`}
                        submitLabel="Save reward"
                        fixed={{ ruleId: rule.id }}
                        fields={[
                          {
                            name: 'rewardCredits',
                            label: `New reward for ${rule.eventType}`,
                            kind: 'credits',
                            min: 1,
                          },
                        ]}
                        onDone={reload}
                      />
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
      )}
    </Section>
  );
}
