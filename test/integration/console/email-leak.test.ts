// Kept closed: an owner who adds an identity id someone else holds learns nothing of it. The
// member's e-mail is shown only where that identity joined by its own act (docs/identity.md, "Member e-mails"):
// - addMember with a victim's id, then reading the members: no e-mail;
// - an invitee whose invitation was revoked: no e-mail, even where it had joined;
// - addMember and the member read answer a developer's id and a stranger's alike (no oracle);
// - the victim's console marks the organization it never joined (joined: false over GraphQL; the REST snapshot keeps
//   the document's shape, without joined) until it accepts; then, and only in that organization, its e-mail is shown.

import { act, type Developer, developer, ok, snapshot, world } from '../../support/console.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';
import { gql } from '../graphql/helpers.ts';

let system: TestSystem;
let attacker: Developer;
let victim: Developer;
let attackerOrganizationId: string;

const MEMBERS = `{ snapshot { organizations { id joined members { id identityUserId email role joined createdAt } } } }`;

type MemberView = { id: string; identityUserId: string; email: string | null; role: string; joined: boolean };

async function membersOf(token: string, organizationId: string): Promise<MemberView[]> {
  const result = await gql(system, token, MEMBERS);
  expect(result.status).toBe(200);
  const organization = (result.body as any).data.snapshot.organizations.find((o: any) => o.id === organizationId);
  return organization.members;
}

/** The attacker adds an identity id to one of its organizations as a viewer. */
function addViewer(organizationId: string, identityUserId: string) {
  return ok(system, attacker.token, { type: 'addMember', organizationId, identityUserId, role: 'viewer' });
}

/** The e-mail the attacker reads for a member of one of its organizations (GraphQL). */
async function emailIn(organizationId: string, identityUserId: string): Promise<string | null> {
  return (await membersOf(attacker.token, organizationId)).find((m) => m.identityUserId === identityUserId)!.email;
}

/** Signs in once (GET /access): the invitation is then bound to the token's subject, the case that leaked. */
async function signIn(who: Developer): Promise<void> {
  expect((await api(system.url, 'GET', '/api/developer/v1/access', { token: who.token })).status).toBe(200);
}

beforeAll(async () => {
  system = await startTestSystem();
  attacker = await developer(system);
  victim = await developer(system);
  await signIn(victim);
  // The victim has an organization of its own (joined: it created it).
  await world(system, victim.token);
  attackerOrganizationId = (await ok(system, attacker.token, { type: 'createOrganization', name: 'Bait' })).id;
});

afterAll(async () => {
  await system?.stop();
});

test("addMember with a victim's id and a stranger's answers alike, and the members read shows neither e-mail", async () => {
  const stranger = 'idp|not-a-developer';
  const added = [victim.sub, stranger].map((identityUserId) =>
    act(system, attacker.token, {
      type: 'addMember',
      organizationId: attackerOrganizationId,
      identityUserId,
      role: 'viewer',
    }),
  );
  const [forVictim, forStranger] = await Promise.all(added);
  // Same status, same shape, same headers but the new member's id.
  const answer = (r: Awaited<(typeof added)[number]>) => ({
    status: r.status,
    body: { ...(r.body as any), data: { ...(r.body as any).data, id: 'the new member' } },
  });
  expect(answer(forVictim!)).toEqual(answer(forStranger!));
  expect(forVictim!.status).toBe(200);

  const members = await membersOf(attacker.token, attackerOrganizationId);
  const view = (id: string) => {
    const m = members.find((member) => member.identityUserId === id)!;
    return { email: m.email, role: m.role, joined: m.joined };
  };
  expect(view(victim.sub)).toEqual({ email: null, role: 'viewer', joined: false });
  expect(view(stranger)).toEqual(view(victim.sub));
  // The attacker's own e-mail is shown: it joined (created the organization).
  expect(view(attacker.sub)).toEqual({ email: attacker.email, role: 'owner', joined: true });
  // Adding again answers 409 conflict for either: the membership's, not the identity's.
  for (const identityUserId of [victim.sub, stranger]) {
    const again = await act(system, attacker.token, {
      type: 'addMember',
      organizationId: attackerOrganizationId,
      identityUserId,
      role: 'admin',
    });
    expect([again.status, (again.body as any).error.code]).toEqual([409, 'conflict']);
  }
});

test("the victim's console marks the organization it was added to, and accepting it shows its e-mail there only", async () => {
  const joinedOf = (organizations: Array<{ id: string; joined: boolean }>) =>
    new Map(organizations.map((o) => [o.id, o.joined]));
  const graphqlOrganizations = async () =>
    ((await gql(system, victim.token, MEMBERS)).body as any).data.snapshot.organizations as Array<{
      id: string;
      joined: boolean;
    }>;
  const before = joinedOf(await graphqlOrganizations());
  expect(before.get(attackerOrganizationId)).toBe(false);
  expect([...before.values()].sort()).toEqual([false, true]);
  // REST lists the same organizations in the document's shape: no joined on an organization or a member.
  const rest = await snapshot(system, victim.token);
  expect(rest.organizations.map((o: { id: string }) => o.id).sort()).toEqual([...before.keys()].sort());
  for (const item of [...rest.organizations, ...rest.members]) expect(item).not.toHaveProperty('joined');

  // The attacker adds the victim to a second organization; the victim accepts the first only.
  const second = (await ok(system, attacker.token, { type: 'createOrganization', name: 'Bait 2' })).id;
  await addViewer(second, victim.sub);
  await ok(system, victim.token, { type: 'acceptMembership', organizationId: attackerOrganizationId });
  const after = joinedOf(await graphqlOrganizations());
  expect(after.get(attackerOrganizationId)).toBe(true);
  expect(after.get(second)).toBe(false);
  expect(await emailIn(attackerOrganizationId, victim.sub)).toBe(victim.email);
  expect(await emailIn(second, victim.sub)).toBeNull();
});

test('acceptMembership is for members only: 404 not_found for an organization one is not in', async () => {
  const outsider = await developer(system);
  const refused = await act(system, outsider.token, {
    type: 'acceptMembership',
    organizationId: attackerOrganizationId,
  });
  expect([refused.status, (refused.body as any).error.code]).toEqual([404, 'not_found']);
});

test("a revoked invitee's e-mail is not shown, whether it had joined or is added afterwards", async () => {
  const invitee = await developer(system);
  await signIn(invitee);
  await addViewer(attackerOrganizationId, invitee.sub);
  await ok(system, invitee.token, { type: 'acceptMembership', organizationId: attackerOrganizationId });
  expect(await emailIn(attackerOrganizationId, invitee.sub)).toBe(invitee.email);

  const invitations = (await admin(system, 'GET', '/invitations')).body as any;
  const invitation = invitations.data.records.find((r: any) => r.identityUserId === invitee.sub);
  expect((await admin(system, 'POST', `/invitations/${invitation.id}/revoke`)).status).toBe(200);
  expect(await emailIn(attackerOrganizationId, invitee.sub)).toBeNull();

  // Added to another organization after the revocation: nothing either.
  const other = (await ok(system, attacker.token, { type: 'createOrganization', name: 'Bait 3' })).id;
  await addViewer(other, invitee.sub);
  const members = await membersOf(attacker.token, other);
  expect(members.find((m) => m.identityUserId === invitee.sub)).toMatchObject({ email: null, joined: false });
});
