import { useState } from 'react';
import { CREDITS_MAX, PLATFORMS } from '../../../services/runtime/src/contracts/vocabulary.ts';
import { canManageMembers, canWrite, type Member, type Snapshot } from '../api.ts';
import {
  ActionForm,
  amountAbove,
  amountOf,
  Bar,
  credits,
  creditsWithDollars,
  figure,
  Heading,
  Reveal,
  roomLeft,
  Section,
  TableBox,
  useTitle,
} from '../components.tsx';
import { developerSubjectOf } from '../subject.ts';

const memberName = (m: Member) => m.email ?? m.identityUserId;

import { GameBadges } from './state.tsx';

const BALANCE_LIMIT_SENTENCE = `A balance can hold at most ${CREDITS_MAX.toLocaleString('en-US')} credits: fund less.`;
const NAME_RULE = 'Enter a name of 1 to 100 characters, without control characters.';

/** One organization: funding, its projects (each with a page of its own) and members. */
export function OrganizationPage({
  snapshot,
  organizationId,
  reload,
}: {
  snapshot: Snapshot;
  organizationId: string;
  reload: () => void;
}) {
  const org = snapshot.organizations.find((o) => o.id === organizationId);
  useTitle(org ? `Organization ${org.name}` : 'Organization not found');
  if (!org) return <p role="alert">This organization does not exist or you are not a member.</p>;
  const write = canWrite(org.role);
  const projects = snapshot.projects.filter((p) => p.organizationId === org.id);
  const members = snapshot.members.filter((m) => m.organizationId === org.id);
  return (
    <>
      <h1>Organization {org.name}</h1>
      <p>
        Your role: <strong>{org.role}</strong>.{' '}
        {org.unlimitedFunding ? 'Unlimited funding.' : `Balance: ${creditsWithDollars(org.balanceCredits)}.`}{' '}
        <a href={`#/org/${org.id}/activity`}>Activity: who changed what</a>
      </p>
      {!org.joined && (
        <div className="banner banner-warn" data-testid="not-joined">
          <p>
            <strong>You did not join this organization.</strong> Its owner added your identity; your e-mail stays hidden
            from its members until you accept.
          </p>
          <ActionForm
            compact
            action="acceptMembership"
            title={`Accept membership of ${org.name}`}
            submitLabel="Accept membership"
            fixed={{ organizationId: org.id }}
            fields={[]}
            onDone={reload}
          />
        </div>
      )}
      {!org.unlimitedFunding && org.balanceCredits === 0 && (
        <p className="banner banner-warn" data-testid="balance-empty">
          <strong>The balance is 0 credits.</strong>{' '}
          {write
            ? 'Fund the organization before allocating to its projects.'
            : 'An owner or admin has to fund it before its projects get more budget.'}
        </p>
      )}
      {write && !org.unlimitedFunding && (
        <Reveal label="Fund organization" buttonClass="primary">
          <ActionForm
            action="fundOrganization"
            title="Fund organization"
            submitLabel="Fund"
            fixed={{ organizationId: org.id }}
            fields={[{ name: 'amountCredits', label: 'Amount to fund (credits)', kind: 'credits', min: 1 }]}
            limit={(input) =>
              amountAbove(input, [{ room: CREDITS_MAX - org.balanceCredits, sentence: BALANCE_LIMIT_SENTENCE }])
            }
            room={() => roomLeft(CREDITS_MAX - org.balanceCredits)}
            confirm={(input) => [
              ['Organization balance', figure(org.balanceCredits), figure(org.balanceCredits + amountOf(input))],
            ]}
            onDone={reload}
          />
        </Reveal>
      )}
      <Section title="Projects">
        {projects.length === 0 && (
          <p className="empty">
            No project yet.{write ? ' A project holds games and a budget that you allocate to them.' : ''}
          </p>
        )}
        <div className="cards">
          {projects.map((project) => {
            const games = snapshot.games.filter((g) => g.projectId === project.id);
            return (
              <article key={project.id} className="card" aria-label={`Project ${project.name}`}>
                <Heading>
                  <a href={`#/project/${project.id}`}>Project {project.name}</a>
                </Heading>
                <Bar
                  label="Budget"
                  value={project.budgetCredits}
                  max={project.maxPayoutCredits}
                  detail={`of ceiling ${credits(project.maxPayoutCredits)}`}
                />
                <Bar
                  label="Spent"
                  value={project.spentCredits}
                  max={project.budgetCredits}
                  detail={`of budget ${credits(project.budgetCredits)}`}
                />
                <ul>
                  {games.map((g) => (
                    <li key={g.id}>
                      <a href={`#/game/${g.id}`}>Game {g.name}</a> ({g.status}) <GameBadges game={g} />
                    </li>
                  ))}
                </ul>
              </article>
            );
          })}
        </div>
        {write && (
          <Reveal label="New project">
            <ActionForm
              action="createProject"
              title="New project"
              submitLabel="Create project"
              fixed={{ organizationId: org.id }}
              fields={[
                { name: 'name', label: 'Project name', kind: 'text', rule: NAME_RULE },
                { name: 'maxPayoutCredits', label: 'Project ceiling (credits)', kind: 'credits' },
              ]}
              onDone={reload}
            />
          </Reveal>
        )}
      </Section>
      <Section title="Members">
        <TableBox label="Members">
          <table aria-label="Members" className="stack members">
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Since</th>
                {canManageMembers(org.role) && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {members.map((m) => {
                const who = memberName(m);
                return (
                  <tr key={m.id}>
                    <td className="member">
                      {m.email ?? (
                        <span className="muted">
                          {m.joined ? 'E-mail not known' : 'E-mail hidden until they accept the membership'}
                        </span>
                      )}
                      <details className="identity">
                        <summary>
                          Identity id<span className="visually-hidden"> of {who}</span>
                        </summary>
                        <code>{m.identityUserId}</code>
                      </details>
                    </td>
                    <td data-label="Role">{m.role}</td>
                    <td data-label="Since">{new Date(m.createdAt).toLocaleString()}</td>
                    {canManageMembers(org.role) && (
                      <td className="member-actions">
                        {m.role !== 'owner' && (
                          <>
                            <ActionForm
                              compact
                              action="updateMember"
                              title={`Change role of ${who}`}
                              submitLabel="Change role"
                              fixed={{ memberId: m.id }}
                              fields={[
                                {
                                  name: 'role',
                                  label: 'Role',
                                  kind: 'select',
                                  options: ['admin', 'viewer'],
                                  initial: m.role,
                                },
                              ]}
                              onDone={reload}
                            />
                            <ActionForm
                              compact
                              action="removeMember"
                              title={`Remove ${who}`}
                              submitLabel="Remove"
                              submitClass="danger"
                              fixed={{ memberId: m.id }}
                              fields={[]}
                              danger={() => ({
                                title: `Remove ${who}?`,
                                body: `This ${m.role} loses access to ${org.name} at once. You can add them again later.`,
                                confirmLabel: 'Remove member',
                              })}
                              onDone={reload}
                            />
                          </>
                        )}
                        {m.role === 'owner' && (
                          <span className="muted">
                            The owner’s role cannot be changed or removed, and ownership cannot be transferred: the
                            owner created the organization, and the API has no action that moves it.
                          </span>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
        {canManageMembers(org.role) && <MemberInvite organizationId={org.id} reload={reload} />}
      </Section>
    </>
  );
}

/**
 * Adds a member by e-mail: the member is the identity subject of that e-mail. With the development provider that
 * subject is derived from the e-mail; with another provider, type the subject (identity user id) itself.
 */
function MemberInvite({ organizationId, reload }: { organizationId: string; reload: () => void }) {
  // What happens next for the member just added (their e-mail or id, and role), until the next addition.
  const [added, setAdded] = useState<{ who: string; role: string } | undefined>();
  return (
    <>
      {added && (
        <p className="banner" role="status" data-testid="member-added">
          <strong>
            {added.who} is added as {added.role}.
          </strong>{' '}
          They are listed with “E-mail hidden” until they sign in and accept the membership on this organization’s page;
          their role applies from then on. To sign in they need the operator’s invitation for their e-mail (
          <code>npm run admin -- invite EMAIL</code>); without it the sign-in is refused with{' '}
          <code>DEVELOPER_INVITATION_REQUIRED</code>.
        </p>
      )}
      <MemberInviteForm
        organizationId={organizationId}
        onAdded={(who, role) => {
          setAdded({ who, role });
          reload();
        }}
      />
    </>
  );
}

function MemberInviteForm({
  organizationId,
  onAdded,
}: {
  organizationId: string;
  onAdded: (who: string, role: string) => void;
}) {
  return (
    <Reveal label="Invite a member">
      <p className="hint" id="invite-needs">
        <strong>They also need an operator invitation.</strong> Adding someone here gives them a role in this
        organization; signing in to the console also needs an invitation for their e-mail from the operator of this
        service (<code>npm run admin -- invite EMAIL</code>). Without one, their sign-in is refused with{' '}
        <code>DEVELOPER_INVITATION_REQUIRED</code>. Owners cannot send that invitation from the console: ask the
        operator.
      </p>
      <ActionForm
        action="addMember"
        title="Invite a member"
        submitLabel="Add member"
        fixed={{ organizationId }}
        fields={[
          {
            name: 'identityUserId',
            label: 'E-mail (development sign-in) or identity user id',
            kind: 'text',
            rule: 'Enter an e-mail, or an identity user id of 1 to 200 characters.',
          },
          { name: 'role', label: 'Role', kind: 'select', options: ['viewer', 'admin'], initial: 'viewer' },
        ]}
        transform={async (input) => {
          const value = String(input.identityUserId ?? '');
          if (value.includes('@')) input.identityUserId = await developerSubjectOf(value);
          return input;
        }}
        onDone={(_result, input) => onAdded(String(input.identityUserId), String(input.role))}
      />
    </Reveal>
  );
}

/** One project: its budget against its ceiling, its games, and (for writers) allocate, edit and new game. */
export function ProjectPage({
  snapshot,
  projectId,
  reload,
}: {
  snapshot: Snapshot;
  projectId: string;
  reload: () => void;
}) {
  const project = snapshot.projects.find((p) => p.id === projectId);
  useTitle(project ? `Project ${project.name}` : 'Project not found');
  if (!project) return <p role="alert">This project does not exist or you are not a member of its organization.</p>;
  const org = snapshot.organizations.find((o) => o.id === project.organizationId);
  const write = canWrite(org?.role);
  const games = snapshot.games.filter((g) => g.projectId === project.id);
  const allocatedToGames = games.reduce((sum, g) => sum + g.budgetCredits, 0);
  return (
    <>
      <h1>Project {project.name}</h1>
      <p>
        {org && <a href={`#/org/${org.id}`}>Organization {org.name}</a>}. Your role: <strong>{org?.role}</strong>.
        Budget not yet allocated to games: {creditsWithDollars(project.budgetCredits - allocatedToGames)}.
      </p>
      <Bar
        label="Budget"
        value={project.budgetCredits}
        max={project.maxPayoutCredits}
        detail={`of ceiling ${credits(project.maxPayoutCredits)}`}
      />
      <Bar
        label="Allocated to games"
        value={allocatedToGames}
        max={project.budgetCredits}
        detail={`of budget ${credits(project.budgetCredits)}`}
      />
      <Bar
        label="Spent"
        value={project.spentCredits}
        max={project.budgetCredits}
        detail={`of budget ${credits(project.budgetCredits)}`}
      />
      {write && org && (
        <div className="actions">
          <Reveal label={`Allocate to project ${project.name}`} buttonClass="primary">
            <ActionForm
              action="allocateProject"
              title={`Allocate to project ${project.name}`}
              submitLabel="Allocate"
              fixed={{ projectId: project.id }}
              fields={[{ name: 'amountCredits', label: 'Amount to allocate (credits)', kind: 'credits', min: 1 }]}
              limit={(input) =>
                amountAbove(input, [
                  {
                    room: project.maxPayoutCredits - project.budgetCredits,
                    sentence: `This would take the project's budget above its ceiling of ${credits(project.maxPayoutCredits)}: raise the ceiling, or allocate less.`,
                  },
                  ...(org.unlimitedFunding
                    ? []
                    : [
                        {
                          room: org.balanceCredits,
                          sentence:
                            "The organization's balance is lower than this amount: fund it first, or allocate less.",
                        },
                      ]),
                ])
              }
              room={() => roomLeft(project.maxPayoutCredits - project.budgetCredits)}
              confirm={(input) => [
                [
                  'Organization balance',
                  org.unlimitedFunding ? 'unlimited' : figure(org.balanceCredits),
                  org.unlimitedFunding ? 'unlimited' : figure(org.balanceCredits - amountOf(input)),
                ],
                ['Project budget', figure(project.budgetCredits), figure(project.budgetCredits + amountOf(input))],
                ['Project ceiling', figure(project.maxPayoutCredits), figure(project.maxPayoutCredits)],
              ]}
              onDone={reload}
            />
          </Reveal>
          <Reveal label={`Edit project ${project.name}`}>
            <ActionForm
              action="updateProject"
              title={`Edit project ${project.name}`}
              submitLabel="Save project"
              fixed={{ projectId: project.id }}
              fields={[
                { name: 'name', label: 'New name', kind: 'text', optional: true, rule: NAME_RULE },
                {
                  name: 'maxPayoutCredits',
                  label: `New ceiling (credits; now ${credits(project.maxPayoutCredits)})`,
                  kind: 'credits',
                  optional: true,
                },
              ]}
              errorField="maxPayoutCredits"
              onDone={reload}
            />
          </Reveal>
        </div>
      )}
      <Section title="Games">
        {games.length === 0 ? (
          <p className="empty">No game yet.{write ? ' Create one, then allocate part of this budget to it.' : ''}</p>
        ) : (
          <TableBox label="Games">
            <table aria-label="Games">
              <thead>
                <tr>
                  <th scope="col">Game</th>
                  <th scope="col">Platform</th>
                  <th scope="col">Status</th>
                  <th scope="col">Budget</th>
                  <th scope="col">Spent</th>
                  <th scope="col">Daily cap per player</th>
                </tr>
              </thead>
              <tbody>
                {games.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <a href={`#/game/${g.id}`}>Game {g.name}</a> <GameBadges game={g} />
                    </td>
                    <td>{g.platform}</td>
                    <td>{g.status}</td>
                    <td>{credits(g.budgetCredits)}</td>
                    <td>{credits(g.spentCredits)}</td>
                    <td>{credits(g.dailyPlayerCapCredits)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        )}
        {write && (
          <Reveal label={`New game in ${project.name}`}>
            <ActionForm
              action="createGame"
              title={`New game in ${project.name}`}
              submitLabel="Create game"
              fixed={{ projectId: project.id }}
              fields={[
                { name: 'name', label: 'Game name', kind: 'text', rule: NAME_RULE },
                {
                  name: 'platform',
                  label: 'Platform',
                  kind: 'select',
                  options: ['web', ...PLATFORMS.filter((p) => p !== 'web')],
                  initial: 'web',
                },
                { name: 'maxPayoutCredits', label: 'Game ceiling (credits)', kind: 'credits' },
                { name: 'dailyPlayerCapCredits', label: 'Daily cap per player (credits)', kind: 'credits' },
              ]}
              onDone={reload}
            />
          </Reveal>
        )}
      </Section>
    </>
  );
}
