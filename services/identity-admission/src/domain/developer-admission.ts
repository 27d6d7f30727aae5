// Developer admission (CONTRACT section 4), checks in this order, first failure wins:
// 1 token (401 UNAUTHORIZED), 2 Origin (403 INVALID_SESSION_ORIGIN), 3 verified e-mail (403
// EMAIL_VERIFICATION_REQUIRED), 4 invitation bound to this subject (403 DEVELOPER_INVITATION_REQUIRED; the first
// admitted request binds it for good), 5 identity store unreachable (503 AUTH_UNAVAILABLE).
// A token is valid when it verifies (see token-verifier.ts) and carries the required claims `sub`, `email`,
// `email_verified` and `exp`; a token without `email_verified` is therefore not a valid session (401), while
// `email_verified` present but not exactly `true` (false, "true") is step 3.

import { hasControlCharacters } from '#runtime/contracts/identity-names.ts';
import { isDatabaseFailure } from '#runtime/db/failures.ts';
import { AppError } from '#runtime/errors.ts';
import { isAllowedOrigin } from '#runtime/http/origins.ts';
import type { InvitationRow } from '../repositories/invitations.ts';
import { bearerToken, type TokenVerifier } from '../sessions/token-verifier.ts';

export interface DeveloperPrincipal {
  identityUserId: string;
  email: string;
  canCreateUnlimitedOrganization: boolean;
}

export interface InvitationStore {
  bindFirstUse(email: string, subject: string): Promise<InvitationRow | undefined>;
  findActiveByEmail(email: string): Promise<InvitationRow | undefined>;
}

export interface DeveloperAdmissionDeps {
  verifier: TokenVerifier;
  invitations: InvitationStore;
  allowedOrigins: string[];
}

/** Claims a developer session token must carry (with `exp`, which every verifier requires). */
export const DEVELOPER_REQUIRED_CLAIMS = ['sub', 'email', 'email_verified'];

const unauthorized = () => new AppError('UNAUTHORIZED', 'A valid developer session token is required.');
const storeUnavailable = () => new AppError('AUTH_UNAVAILABLE', 'The identity store is temporarily unavailable.');

export async function admitDeveloper(
  deps: DeveloperAdmissionDeps,
  request: { authorization: string; origin: string },
): Promise<DeveloperPrincipal> {
  const token = bearerToken(request.authorization);
  if (!token) throw unauthorized();
  const verified = await deps.verifier.verify(token);
  if (!verified.ok) {
    if (verified.reason === 'keys_unavailable') throw storeUnavailable();
    throw unauthorized();
  }
  const { sub, email, email_verified: emailVerified } = verified.payload as Record<string, unknown>;
  if (
    typeof sub !== 'string' ||
    sub === '' ||
    sub.length > 200 ||
    typeof email !== 'string' ||
    email === '' ||
    email.length > 320 ||
    // Claims that no invitation or member can hold (PostgreSQL text refuses NUL; a lone surrogate would be stored
    // as U+FFFD): a malformed session, not an outage of the identity store.
    !isStorableClaim(sub) ||
    !isStorableClaim(email)
  ) {
    throw unauthorized();
  }
  if (request.origin !== '' && !isAllowedOrigin(request.origin, deps.allowedOrigins)) {
    throw new AppError('INVALID_SESSION_ORIGIN', 'This origin may not call the developer API.');
  }
  if (emailVerified !== true) {
    throw new AppError('EMAIL_VERIFICATION_REQUIRED', 'The session e-mail address is not verified.');
  }
  let invitation: InvitationRow | undefined;
  try {
    const current = await deps.invitations.findActiveByEmail(email);
    invitation =
      current && current.identity_user_id === null ? await deps.invitations.bindFirstUse(email, sub) : current;
  } catch (error) {
    // A bug is not an outage (db/failures.ts): it answers 500 and is logged as such.
    if (!isDatabaseFailure(error)) throw error;
    throw storeUnavailable();
  }
  if (!invitation || invitation.identity_user_id !== sub) {
    throw new AppError('DEVELOPER_INVITATION_REQUIRED', 'An active developer invitation is required.');
  }
  return {
    identityUserId: sub,
    email,
    canCreateUnlimitedOrganization: invitation.can_create_unlimited_organization,
  };
}

function isStorableClaim(text: string): boolean {
  return text.isWellFormed() && !hasControlCharacters(text);
}
