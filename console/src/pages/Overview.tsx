import { canWrite, type Snapshot } from '../api.ts';
import { ActionForm, Bar, credits, creditsWithDollars, Reveal, useTitle } from '../components.tsx';
import { GameBadges } from './state.tsx';

/** Organizations → projects → games, each with balance, budget, spent and ceilings as bars. */
export function Overview({ snapshot, reload }: { snapshot: Snapshot; reload: () => void }) {
  useTitle('Organizations');
  return (
    <>
      <h1>Organizations</h1>
      {snapshot.organizations.length === 0 && <p>No organization yet.</p>}
      <ul className="tree" aria-label="Organizations, projects and games">
        {snapshot.organizations.map((org) => (
          <li key={org.id}>
            <a href={`#/org/${org.id}`} className="node">
              {org.name}
            </a>{' '}
            <span className="role">({org.role})</span>
            {!org.joined && (
              <span className="badge badge-warn" data-testid="not-joined">
                added by an owner, not accepted
              </span>
            )}
            {org.unlimitedFunding ? (
              <p>Balance: unlimited funding</p>
            ) : (
              <p>
                Balance: {creditsWithDollars(org.balanceCredits)}
                {org.balanceCredits === 0 && <span className="badge badge-warn">balance 0</span>}
              </p>
            )}
            <ul>
              {snapshot.projects
                .filter((p) => p.organizationId === org.id)
                .map((project) => (
                  <li key={project.id}>
                    <a href={`#/project/${project.id}`} className="node">
                      Project {project.name}
                    </a>
                    <Bar
                      label={`${project.name} budget`}
                      value={project.budgetCredits}
                      max={project.maxPayoutCredits}
                      detail={`of ceiling ${credits(project.maxPayoutCredits)}`}
                    />
                    <Bar
                      label={`${project.name} spent`}
                      value={project.spentCredits}
                      max={project.budgetCredits}
                      detail={`of budget ${credits(project.budgetCredits)}`}
                    />
                    <ul>
                      {snapshot.games
                        .filter((g) => g.projectId === project.id)
                        .map((game) => (
                          <li key={game.id}>
                            <a href={`#/game/${game.id}`} className="node">
                              {game.name}
                            </a>{' '}
                            <span className="role">
                              {game.platform}, {game.status}
                            </span>{' '}
                            <GameBadges game={game} />
                            <Bar
                              label={`${game.name} budget`}
                              value={game.budgetCredits}
                              max={game.maxPayoutCredits}
                              detail={`of ceiling ${credits(game.maxPayoutCredits)}`}
                            />
                            <Bar
                              label={`${game.name} spent`}
                              value={game.spentCredits}
                              max={game.budgetCredits}
                              detail={`of budget ${credits(game.budgetCredits)}`}
                            />
                          </li>
                        ))}
                    </ul>
                  </li>
                ))}
            </ul>
          </li>
        ))}
      </ul>
      {snapshot.organizations.length === 0 && (
        <p className="empty">
          Start with an organization: it holds your funding, projects and games, and you are its owner.
        </p>
      )}
      <Reveal label="New organization">
        <ActionForm
          action="createOrganization"
          title="New organization"
          submitLabel="Create organization"
          fields={[
            {
              name: 'name',
              label: 'Organization name',
              kind: 'text',
              rule: 'Enter a name of 1 to 100 characters, without control characters.',
            },
            ...(snapshot.canCreateUnlimitedOrganization
              ? [{ name: 'unlimitedFunding', label: 'Unlimited funding', kind: 'checkbox' as const }]
              : []),
          ]}
          onDone={(result) => {
            reload();
            window.location.hash = `#/org/${result.id}`;
          }}
        />
      </Reveal>
      {snapshot.organizations.length === 0 || snapshot.organizations.some((o) => canWrite(o.role)) ? null : (
        <p className="hint">Your role lets you read the organizations above; ask an owner for write access.</p>
      )}
    </>
  );
}
