// The developer admission decision as a function of state: for any combination of failing checks the answer is the
// first failure in CONTRACT section 4's order, and an invitation is bound only by an otherwise admitted request.
import fc from 'fast-check';
import { AppError } from '#runtime/errors.ts';
import type { InvitationRow } from '../repositories/invitations.ts';
import type { TokenVerifier } from '../sessions/token-verifier.ts';
import { admitDeveloper } from './developer-admission.ts';

interface Situation {
  noHeader: boolean;
  badToken: boolean;
  keysDown: boolean;
  origin: 'none' | 'allowed' | 'foreign';
  verified: boolean;
  invitation: 'none' | 'unbound' | 'mine' | 'other';
  storeDown: boolean;
}

function expected(s: Situation): { status: number; code: string } | 'admitted' {
  if (s.noHeader || s.badToken) return { status: 401, code: 'UNAUTHORIZED' };
  if (s.keysDown) return { status: 503, code: 'AUTH_UNAVAILABLE' };
  if (s.origin === 'foreign') return { status: 403, code: 'INVALID_SESSION_ORIGIN' };
  if (!s.verified) return { status: 403, code: 'EMAIL_VERIFICATION_REQUIRED' };
  if (s.storeDown) return { status: 503, code: 'AUTH_UNAVAILABLE' };
  if (s.invitation === 'none' || s.invitation === 'other')
    return { status: 403, code: 'DEVELOPER_INVITATION_REQUIRED' };
  return 'admitted';
}

const row = (subject: string | null): InvitationRow => ({
  id: 'a4b0c9f6-3f0e-4b6e-8a51-5d1c2b3a4f5e',
  email: 'Dev@Example.com',
  status: 'active',
  identity_user_id: subject,
  can_create_unlimited_organization: true,
  created_at: '2026-11-22T00:00:00.000Z',
  bound_at: subject ? '2026-11-22T00:00:01.000Z' : null,
});

async function decide(s: Situation) {
  const bound: string[] = [];
  const verifier: TokenVerifier = {
    async verify() {
      if (s.badToken) return { ok: false, reason: 'invalid' };
      if (s.keysDown) return { ok: false, reason: 'keys_unavailable' };
      return { ok: true, payload: { sub: 'idp|me', email: 'dev@example.com', email_verified: s.verified } };
    },
  };
  const current = { none: undefined, unbound: row(null), mine: row('idp|me'), other: row('idp|other') }[s.invitation];
  const outcome = await admitDeveloper(
    {
      verifier,
      allowedOrigins: ['https://console.example.com'],
      invitations: {
        async findActiveByEmail() {
          if (s.storeDown) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return current;
        },
        async bindFirstUse(_email, subject) {
          bound.push(subject);
          return row(subject);
        },
      },
    },
    {
      authorization: s.noHeader ? '' : 'Bearer a.b.c',
      origin: { none: '', allowed: 'https://Console.example.com', foreign: 'https://evil.example' }[s.origin],
    },
  ).then(
    (principal) => ({ principal }),
    (error: unknown) => {
      if (!(error instanceof AppError)) throw error;
      return { error };
    },
  );
  return { outcome, bound };
}

const situation = fc.record<Situation>({
  noHeader: fc.boolean(),
  badToken: fc.boolean(),
  keysDown: fc.boolean(),
  origin: fc.constantFrom('none', 'allowed', 'foreign'),
  verified: fc.boolean(),
  invitation: fc.constantFrom('none', 'unbound', 'mine', 'other'),
  storeDown: fc.boolean(),
});

describe('admitDeveloper', () => {
  it('answers the first failing check in the contract order', async () => {
    await fc.assert(
      fc.asyncProperty(situation, async (s) => {
        const { outcome } = await decide(s);
        const want = expected(s);
        if (want === 'admitted') {
          expect(outcome).toEqual({
            principal: { identityUserId: 'idp|me', email: 'dev@example.com', canCreateUnlimitedOrganization: true },
          });
        } else {
          expect('error' in outcome && { status: outcome.error.status, code: outcome.error.code }).toEqual(want);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('binds an unbound invitation only when every earlier check passed', async () => {
    await fc.assert(
      fc.asyncProperty(situation, async (s) => {
        const { bound } = await decide(s);
        const binds = expected(s) === 'admitted' && s.invitation === 'unbound';
        expect(bound).toEqual(binds ? ['idp|me'] : []);
      }),
    );
  });
});

describe('admitDeveloper: claims no store can hold', () => {
  it('a sub or email with a control character or a lone surrogate is a malformed session (401), not an outage', async () => {
    for (const claims of [
      { sub: 'idp|me\u0000', email: 'dev@example.com' },
      { sub: 'idp|me', email: 'dev\u0000@example.com' },
      { sub: 'idp|me', email: 'dev\u0001@example.com' },
      { sub: 'idp|\ud800', email: 'dev@example.com' },
      { sub: 'idp|me', email: 'dev\udc00@example.com' },
    ]) {
      const lookups: string[] = [];
      const outcome = await admitDeveloper(
        {
          verifier: { verify: async () => ({ ok: true, payload: { ...claims, email_verified: true } }) },
          allowedOrigins: [],
          invitations: {
            async findActiveByEmail(email) {
              lookups.push(email);
              throw new Error('invalid byte sequence for encoding "UTF8": 0x00');
            },
            async bindFirstUse() {
              throw new Error('not reached');
            },
          },
        },
        { authorization: 'Bearer a.b.c', origin: '' },
      ).catch((error: unknown) => error);
      expect({ claims, status: (outcome as AppError).status, code: (outcome as AppError).code, lookups }).toEqual({
        claims,
        status: 401,
        code: 'UNAUTHORIZED',
        lookups: [],
      });
    }
  });
});
