import { Buffer } from 'node:buffer';
import { KeyTenants } from './key-tenants.ts';
import type { EdgeDecision } from './record-events-wire.ts';

const decision = (gameId: string, organizationId: string): EdgeDecision => ({
  json: Buffer.from(JSON.stringify({ id: 'd', eventId: 'e', gameId, organizationId, status: 'accepted' })),
  status: 'accepted',
  reason: null,
  replayed: false,
  quota: undefined,
});

describe('KeyTenants', () => {
  it("learns a credential's game and organization from its first decision", () => {
    const tenants = new KeyTenants();
    expect(tenants.of('Bearer a')).toBeUndefined();
    tenants.learn('Bearer a', decision('g1', 'o1'));
    expect(tenants.of('Bearer a')).toEqual({ game: 'game g1', organization: 'organization o1' });
    // Known: a later decision is not read again.
    tenants.learn('Bearer a', { ...decision('g2', 'o2'), json: Buffer.from('not json') });
    expect(tenants.of('Bearer a')?.game).toBe('game g1');
  });

  it('learns nothing without a decision or a credential', () => {
    const tenants = new KeyTenants();
    tenants.learn('Bearer a', { ...decision('g', 'o'), json: undefined });
    tenants.learn(undefined, decision('g', 'o'));
    tenants.learn('Bearer b', { ...decision('g', 'o'), json: Buffer.from('{"gameId":1}') });
    expect(tenants.size).toBe(0);
    expect(tenants.of(undefined)).toBeUndefined();
  });

  it('keeps at most its bound, forgetting the credential learned first', () => {
    const tenants = new KeyTenants(3);
    for (const n of [1, 2, 3, 4]) tenants.learn(`Bearer ${n}`, decision(`g${n}`, 'o'));
    expect(tenants.size).toBe(3);
    expect(tenants.of('Bearer 1')).toBeUndefined();
    expect(tenants.of('Bearer 4')?.game).toBe('game g4');
    expect(() => new KeyTenants(0)).toThrow('invalid key tenants bound');
  });
});
