// The native admission decision as a function of state: for any combination of failing checks and any mode, the
// answer is the first failure in CONTRACT section 5's order (the HTTP tests cover each code on real servers).
import fc from 'fast-check';
import { AppError } from '#runtime/errors.ts';
import type { NativeAdmissionMode } from '../config.ts';
import type { NativeAccountRow } from '../repositories/native-accounts.ts';
import type { TokenVerifier } from '../sessions/token-verifier.ts';
import { admitNative } from './native-admission.ts';

const ACCOUNT = '0b5f4c8e-1d2a-4f3b-9c6d-7e8f9a0b1c2d';
const OTHER = '1c6a5d9f-2e3b-4a4c-8d7e-8f9a0b1c2d3e';

interface Situation {
  mode: NativeAdmissionMode;
  noHeader: boolean;
  badToken: boolean;
  keysDown: boolean;
  badSub: boolean;
  noSid: boolean;
  badCountry: boolean;
  accountDisabled: boolean;
  accountStoreDown: boolean;
  oldBuild: boolean;
  noCapability: boolean;
  permit: 'mine' | 'none' | 'other' | 'mine-and-other';
  permitStoreDown: boolean;
}

/** The contract's answer, written out step by step. */
function expected(s: Situation): { code: string; status: number } | 'admitted' {
  if (s.noHeader) return { status: 401, code: 'UNAUTHORIZED' };
  if (s.keysDown) return { status: 503, code: 'ACCOUNT_STATUS_UNAVAILABLE' };
  if (s.badToken) return { status: 401, code: 'INVALID_TOKEN' };
  if (s.badSub || s.noSid) return { status: 401, code: 'INVALID_TOKEN_PAYLOAD' };
  if (s.badCountry) return { status: 403, code: 'GEO_BLOCKED' };
  if (s.accountStoreDown) return { status: 503, code: 'ACCOUNT_STATUS_UNAVAILABLE' };
  if (s.accountDisabled) return { status: 403, code: 'ACCOUNT_DISABLED' };
  if (s.oldBuild) return { status: 403, code: 'CLIENT_UPDATE_REQUIRED' };
  if (s.mode !== 'enforce') return 'admitted';
  if (s.noCapability) return { status: 403, code: 'DEVICE_VERIFICATION_REQUIRED' };
  if (s.permitStoreDown) return { status: 503, code: 'DEVICE_AUTH_UNAVAILABLE' };
  if (s.permit === 'mine' || s.permit === 'mine-and-other') return 'admitted';
  if (s.permit === 'other') return { status: 409, code: 'DEVICE_ACCOUNT_CONFLICT' };
  return { status: 403, code: 'DEVICE_VERIFICATION_REQUIRED' };
}

async function decide(s: Situation) {
  const verifier: TokenVerifier = {
    async verify() {
      if (s.keysDown) return { ok: false, reason: 'keys_unavailable' };
      if (s.badToken) return { ok: false, reason: 'invalid' };
      return {
        ok: true,
        payload: { sub: s.badSub ? 'player-1' : ACCOUNT.toUpperCase(), ...(s.noSid ? {} : { sid: 'session-1' }) },
      };
    },
  };
  const created: string[] = [];
  const logged: string[] = [];
  const counted: Array<[string, boolean]> = [];
  const outcome = await admitNative(
    {
      verifier,
      accounts: {
        async findOrCreate(creditsUserId): Promise<NativeAccountRow> {
          if (s.accountStoreDown) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          created.push(creditsUserId);
          return {
            credits_user_id: creditsUserId,
            status: s.accountDisabled ? 'disabled' : 'active',
            username: 'Ada',
            created_at: '2026-11-22T00:00:00.000Z',
          };
        },
      },
      permits: {
        async liveOwners() {
          if (s.permitStoreDown) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return { mine: [ACCOUNT], none: [], other: [OTHER], 'mine-and-other': [OTHER, ACCOUNT] }[s.permit];
        },
      },
      policy: { mode: s.mode, minBuild: 10, supportedCountries: ['DE'] },
      countDeviceDenial: (code, enforced) => counted.push([code, enforced]),
      log: { warn: (_fields, message) => logged.push(message), error: () => undefined },
    },
    {
      authorization: s.noHeader ? '' : 'Bearer a.b.c',
      country: s.badCountry ? 'US' : 'de',
      build: s.oldBuild ? '9' : '10',
      capabilities: s.noCapability ? 'push' : 'push,challenge-v1',
    },
  ).then(
    (principal) => ({ principal }),
    (error: unknown) => {
      if (!(error instanceof AppError)) throw error;
      return { error };
    },
  );
  return { outcome, created, logged, counted };
}

const situation = fc.record<Situation>({
  mode: fc.constantFrom('off', 'monitor', 'enforce'),
  noHeader: fc.boolean(),
  badToken: fc.boolean(),
  keysDown: fc.boolean(),
  badSub: fc.boolean(),
  noSid: fc.boolean(),
  badCountry: fc.boolean(),
  accountDisabled: fc.boolean(),
  accountStoreDown: fc.boolean(),
  oldBuild: fc.boolean(),
  noCapability: fc.boolean(),
  permit: fc.constantFrom('mine', 'none', 'other', 'mine-and-other'),
  permitStoreDown: fc.boolean(),
});

describe('admitNative', () => {
  it('answers the first failing check in the contract order, in every mode', async () => {
    await fc.assert(
      fc.asyncProperty(situation, async (s) => {
        const { outcome } = await decide(s);
        const want = expected(s);
        if (want === 'admitted') {
          expect(outcome).toEqual({
            principal: { creditsUserId: ACCOUNT, sessionId: 'session-1', username: 'Ada' },
          });
        } else {
          expect('error' in outcome && { status: outcome.error.status, code: outcome.error.code }).toEqual(want);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('touches the account store only for a valid session from a supported country', async () => {
    await fc.assert(
      fc.asyncProperty(situation, async (s) => {
        const { created } = await decide(s);
        const reachesAccount = !s.noHeader && !s.keysDown && !s.badToken && !s.badSub && !s.noSid && !s.badCountry;
        expect(created).toEqual(reachesAccount && !s.accountStoreDown ? [ACCOUNT] : []);
      }),
    );
  });

  it('carries minBuild as a number in CLIENT_UPDATE_REQUIRED', async () => {
    const { outcome } = await decide({
      mode: 'enforce',
      noHeader: false,
      badToken: false,
      keysDown: false,
      badSub: false,
      noSid: false,
      badCountry: false,
      accountDisabled: false,
      accountStoreDown: false,
      oldBuild: true,
      noCapability: false,
      permit: 'mine',
      permitStoreDown: false,
    });
    expect('error' in outcome && outcome.error.extra).toEqual({ minBuild: 10 });
  });

  it('monitor mode logs and counts every device denial it does not enforce; enforce counts them as enforced', async () => {
    await fc.assert(
      fc.asyncProperty(situation, async (s) => {
        const passesOneToFour =
          !s.noHeader &&
          !s.keysDown &&
          !s.badToken &&
          !s.badSub &&
          !s.noSid &&
          !s.badCountry &&
          !s.accountStoreDown &&
          !s.accountDisabled &&
          !s.oldBuild;
        const deviceDenial = expected({ ...s, mode: 'enforce' });
        const { logged, counted } = await decide(s);
        const wouldDeny = passesOneToFour && deviceDenial !== 'admitted';
        if (s.mode === 'off' || !wouldDeny) {
          expect(counted).toEqual([]);
          expect(logged).toEqual([]);
        } else {
          const code = (deviceDenial as { code: string }).code;
          expect(counted).toEqual([[code, s.mode === 'enforce']]);
          expect(logged).toHaveLength(s.mode === 'monitor' ? 1 : 0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
