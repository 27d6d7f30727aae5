// DeveloperMember.email: members are listed by the e-mail of their operator invitation (identity-admission's
// DeveloperEmails), bound at their first sign-in or, with the development provider, matched by its subject before
// it; null when no invitation names the member. One DeveloperEmails call per request, whatever the member count.

import { addMember, type Developer, developer, ok, type World, world } from '../../support/console.ts';
import { admin, startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql, requestsBetween, transportRequests } from './helpers.ts';

let system: TestSystem;
let owner: Developer;
let invitedOnly: Developer;
let mine: World;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  // Invited by the operator, never signed in: the invitation is not bound yet.
  invitedOnly = await developer(system);
  mine = await world(system, owner.token);
  await addMember(system, owner.token, mine.organizationId, invitedOnly, 'viewer');
  await ok(system, owner.token, {
    type: 'addMember',
    organizationId: mine.organizationId,
    identityUserId: 'other-provider|no-invitation',
    role: 'admin',
  });
});

afterAll(async () => {
  await system?.stop();
});

const MEMBERS = `{ snapshot { members { identityUserId email role } organizations { members { identityUserId email } } } }`;

test('members are listed by e-mail: bound, matched by the development subject, or null; one call per request', async () => {
  const before = await transportRequests(system);
  const result = await gql(system, owner.token, MEMBERS);
  const after = await transportRequests(system);
  expect(result.status).toBe(200);
  const members = (result.body as any).data.snapshot.members as Array<Record<string, string | null>>;
  const byId = new Map(members.map((m) => [m.identityUserId, m]));
  expect(byId.get(owner.sub)).toMatchObject({ email: owner.email, role: 'owner' });
  expect(byId.get(invitedOnly.sub)).toMatchObject({ email: invitedOnly.email, role: 'viewer' });
  expect(byId.get('other-provider|no-invitation')).toMatchObject({ email: null, role: 'admin' });
  // The nested list reads the same e-mails, from the same one call.
  const nested = (result.body as any).data.snapshot.organizations[0].members as Array<Record<string, string | null>>;
  expect(new Map(nested.map((m) => [m.identityUserId, m.email]))).toEqual(
    new Map(members.map((m) => [m.identityUserId, m.email])),
  );
  const calls = Object.entries(requestsBetween(before, after)).filter(([subject]) =>
    subject.endsWith('.DeveloperEmails'),
  );
  expect(calls.map(([, count]) => count)).toEqual([1]);
});

test('a revoked invitation that was bound still names its member', async () => {
  const invitations = await admin(system, 'GET', '/invitations');
  const bound = (invitations.body as any).data.records.find((r: any) => r.identityUserId === owner.sub);
  expect(bound).toBeDefined();
  // The invited member's own sign-in binds their invitation; the owner's stays as it is.
  const viewerView = await gql(system, invitedOnly.token, MEMBERS);
  expect((viewerView.body as any).data.snapshot.members.map((m: any) => m.email).sort()).toEqual(
    [owner.email, invitedOnly.email, null].sort(),
  );
  const revoked = await admin(system, 'POST', `/invitations/${bound.id}/revoke`);
  expect(revoked.status).toBe(200);
  const result = await gql(system, invitedOnly.token, MEMBERS);
  const members = (result.body as any).data.snapshot.members as Array<Record<string, string | null>>;
  expect(members.find((m) => m.identityUserId === owner.sub)?.email).toBe(owner.email);
});
