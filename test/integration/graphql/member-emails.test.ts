// DeveloperMember.email: a member is listed by the e-mail of their operator invitation (identity-admission's
// DeveloperEmails) once they joined the organization by their own act (its owner, or acceptMembership), and only
// while that invitation is active; null otherwise. One DeveloperEmails call per request, whatever the member count.
// The attacks this rule closes are in ../console/member-emails.test.ts.

import { addMember, type Developer, developer, ok, type World, world } from '../../support/console.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql, requestsBetween, transportRequests } from './helpers.ts';

let system: TestSystem;
let owner: Developer;
let accepted: Developer;
let notAccepted: Developer;
let mine: World;

beforeAll(async () => {
  system = await startTestSystem();
  owner = await developer(system);
  accepted = await developer(system);
  notAccepted = await developer(system);
  mine = await world(system, owner.token);
  await addMember(system, owner.token, mine.organizationId, accepted, 'viewer');
  await addMember(system, owner.token, mine.organizationId, notAccepted, 'admin');
  await ok(system, accepted.token, { type: 'acceptMembership', organizationId: mine.organizationId });
  // Signed in (its invitation bound to its id) but never accepted.
  expect((await api(system.url, 'GET', '/api/developer/v1/access', { token: notAccepted.token })).status).toBe(200);
});

afterAll(async () => {
  await system?.stop();
});

const MEMBERS = `{ snapshot { members { identityUserId email role joined } organizations { members { identityUserId email } } } }`;

test('joined members are listed by e-mail, the others by null; one call per request', async () => {
  const before = await transportRequests(system);
  const result = await gql(system, owner.token, MEMBERS);
  const after = await transportRequests(system);
  expect(result.status).toBe(200);
  const members = (result.body as any).data.snapshot.members as Array<Record<string, string | null>>;
  const byId = new Map(members.map((m) => [m.identityUserId, m]));
  expect(byId.get(owner.sub)).toEqual({ identityUserId: owner.sub, email: owner.email, role: 'owner', joined: true });
  expect(byId.get(accepted.sub)).toMatchObject({ email: accepted.email, role: 'viewer', joined: true });
  expect(byId.get(notAccepted.sub)).toMatchObject({ email: null, role: 'admin', joined: false });
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

test('accepting twice changes nothing; a revoked invitation names no one any more', async () => {
  const again = await ok(system, accepted.token, { type: 'acceptMembership', organizationId: mine.organizationId });
  const first = await ok(system, accepted.token, { type: 'acceptMembership', organizationId: mine.organizationId });
  expect(again.id).toBe(first.id);
  const invitations = await admin(system, 'GET', '/invitations');
  const ownInvitation = (invitations.body as any).data.records.find((r: any) => r.identityUserId === owner.sub);
  expect((await admin(system, 'POST', `/invitations/${ownInvitation.id}/revoke`)).status).toBe(200);
  const result = await gql(system, accepted.token, MEMBERS);
  const members = (result.body as any).data.snapshot.members as Array<Record<string, string | null>>;
  expect(new Map(members.map((m) => [m.identityUserId, m.email]))).toEqual(
    new Map([
      [owner.sub, null],
      [accepted.sub, accepted.email],
      [notAccepted.sub, null],
    ]),
  );
});
