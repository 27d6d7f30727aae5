// Native admission (CONTRACT section 5), checks in this order, first failure wins:
// 1 session token: no Authorization header 401 UNAUTHORIZED; bad signature, issuer, audience, expired 401
//   INVALID_TOKEN; `sub` not a UUID or `sid` missing 401 INVALID_TOKEN_PAYLOAD;
// 2 country (X-Client-Country) missing or not supported: 403 GEO_BLOCKED (before anything about a link token);
// 3 account: created active on first sight; disabled 403 ACCOUNT_DISABLED; store down 503 ACCOUNT_STATUS_UNAVAILABLE;
// 4 build (X-Client-Build) missing or below the minimum (when above 0): 403 CLIENT_UPDATE_REQUIRED with `minBuild`;
// 5 device (mode `enforce`): capability `challenge-v1` missing or no unexpired permit for this `sid` 403
//   DEVICE_VERIFICATION_REQUIRED; the live permit belongs to another account 409 DEVICE_ACCOUNT_CONFLICT; permit store
//   down 503 DEVICE_AUTH_UNAVAILABLE. Mode `monitor` evaluates step 5 and logs what it would deny, never denying on
//   it; mode `off` skips it.
import { isValidSessionId, isValidUsername } from '#runtime/contracts/identity-names.ts';
import { isDatabaseFailure } from '#runtime/db/failures.ts';
import { AppError, type SingleStatusCode } from '#runtime/errors.ts';
import { isUuid } from '#runtime/validation/uuid.ts';
import type { NativeAdmissionMode } from '../config.ts';
import type { NativeAccountRow } from '../repositories/native-accounts.ts';
import { bearerToken, type TokenVerifier } from '../sessions/token-verifier.ts';

export const DEVICE_CAPABILITY = 'challenge-v1';
/** X-Client-Build: a non-negative decimal integer (at most 10 digits, so it stays an exact number). */
const BUILD_PATTERN = /^\d{1,10}$/;
const COUNTRY_PATTERN = /^[A-Za-z]{2}$/;

export interface NativePrincipal {
  creditsUserId: string;
  sessionId: string;
  username: string | undefined;
}

export interface NativeAccountStore {
  findOrCreate(creditsUserId: string, username: string | undefined): Promise<NativeAccountRow>;
}

export interface DevicePermitStore {
  /** Accounts holding an unexpired permit for the session id. */
  liveOwners(sessionId: string): Promise<string[]>;
}

export interface NativeAdmissionPolicy {
  mode: NativeAdmissionMode;
  /** 0: no minimum. */
  minBuild: number;
  /** Upper-case alpha-2 codes; empty: every country is supported. */
  supportedCountries: string[];
}

export interface NativeAdmissionDeps {
  verifier: TokenVerifier;
  accounts: NativeAccountStore;
  permits: DevicePermitStore;
  policy: NativeAdmissionPolicy;
  /** Counts step-5 denials, enforced or (monitor mode) only observed, so that operators can size a switch to enforce. */
  countDeviceDenial?: (code: string, enforced: boolean) => void;
  /** Monitor mode's record of a device denial it did not enforce; store failures for the operator. */
  log: {
    warn(fields: Record<string, unknown>, message: string): void;
    error(fields: Record<string, unknown>, message: string): void;
  };
}

export interface NativeAdmissionRequest {
  authorization: string;
  country: string;
  build: string;
  capabilities: string;
}

const deny = (code: SingleStatusCode, message: string, extra?: Record<string, unknown>) =>
  new AppError(code, message, extra);

export async function admitNative(
  deps: NativeAdmissionDeps,
  request: NativeAdmissionRequest,
): Promise<NativePrincipal> {
  // 1. The session token.
  if (request.authorization.trim() === '') {
    throw deny('UNAUTHORIZED', 'A native session token is required.');
  }
  const token = bearerToken(request.authorization);
  if (!token) throw deny('UNAUTHORIZED', 'The Authorization header must be `Bearer <native session token>`.');
  const verified = await deps.verifier.verify(token);
  if (!verified.ok) {
    if (verified.reason === 'keys_unavailable') {
      throw deny('ACCOUNT_STATUS_UNAVAILABLE', 'The native identity provider is temporarily unavailable.');
    }
    throw deny('INVALID_TOKEN', 'The native session token is invalid or expired.');
  }
  const { sub, sid, preferred_username: preferredUsername } = verified.payload as Record<string, unknown>;
  if (!isUuid(sub) || typeof sid !== 'string' || !isValidSessionId(sid)) {
    throw deny('INVALID_TOKEN_PAYLOAD', 'The native session token needs a UUID `sub` and a `sid`.');
  }
  const creditsUserId = sub.toLowerCase();
  const sessionId = sid;

  // 2. Country, before anything else is looked at.
  const country = request.country.trim();
  if (
    !COUNTRY_PATTERN.test(country) ||
    (deps.policy.supportedCountries.length > 0 && !deps.policy.supportedCountries.includes(country.toUpperCase()))
  ) {
    throw deny('GEO_BLOCKED', 'The service is not available in this country.');
  }

  // 3. The account, created active on first sight.
  let account: NativeAccountRow;
  try {
    account = await deps.accounts.findOrCreate(creditsUserId, usernameClaim(preferredUsername));
  } catch (error) {
    if (!isDatabaseFailure(error)) throw error;
    deps.log.error({ err: error }, 'native account store failed');
    throw deny('ACCOUNT_STATUS_UNAVAILABLE', 'The account status cannot be checked right now; retry later.');
  }
  if (account.status !== 'active') throw deny('ACCOUNT_DISABLED', 'This account is disabled.');

  // 4. Client build.
  const minBuild = deps.policy.minBuild;
  if (minBuild > 0) {
    const build = request.build.trim();
    if (!BUILD_PATTERN.test(build) || Number(build) < minBuild) {
      throw deny('CLIENT_UPDATE_REQUIRED', `This client build is too old; update to build ${minBuild} or later.`, {
        minBuild,
      });
    }
  }

  // 5. Device verification.
  if (deps.policy.mode !== 'off') {
    const denial = await deviceDenial(deps, request.capabilities, sessionId, creditsUserId);
    if (denial) {
      const enforced = deps.policy.mode === 'enforce';
      deps.countDeviceDenial?.(denial.code, enforced);
      if (enforced) throw denial;
      deps.log.warn(
        { creditsUserId, sessionId, code: denial.code, status: denial.status },
        'native admission (monitor mode): device check would deny this session',
      );
    }
  }

  return { creditsUserId, sessionId, username: account.username ?? undefined };
}

async function deviceDenial(
  deps: NativeAdmissionDeps,
  capabilitiesHeader: string,
  sessionId: string,
  creditsUserId: string,
): Promise<AppError | undefined> {
  const capabilities = capabilitiesHeader.split(',').map((c) => c.trim());
  const verificationRequired = () =>
    deny('DEVICE_VERIFICATION_REQUIRED', 'This session needs a verified device (capability challenge-v1).');
  if (!capabilities.includes(DEVICE_CAPABILITY)) return verificationRequired();
  let owners: string[];
  try {
    owners = await deps.permits.liveOwners(sessionId);
  } catch (error) {
    if (!isDatabaseFailure(error)) throw error;
    deps.log.error({ err: error }, 'device permit store failed');
    return deny('DEVICE_AUTH_UNAVAILABLE', 'Device verification is temporarily unavailable; retry later.');
  }
  if (owners.includes(creditsUserId)) return undefined;
  if (owners.length > 0) {
    return deny('DEVICE_ACCOUNT_CONFLICT', "This session's device permit belongs to another account.");
  }
  return verificationRequired();
}

/** `preferred_username` becomes a new account's username when it is a usable name; otherwise it is ignored. */
function usernameClaim(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.trim();
  return isValidUsername(name) ? name : undefined;
}
