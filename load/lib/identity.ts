// Identity providers for load runs: an ES256 key pair per provider, made for the run. The programs trust its public
// JWKS inline (DEVELOPER_JWKS / NATIVE_JWKS with issuer and audience), exactly as they would trust a real provider's,
// and the runner signs the session tokens k6 uses with the private key. Nothing is written to disk.
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

export interface LoadProvider {
  /** Environment of the program that verifies the tokens (identity-admission, or the all-in-one process). */
  env: Record<string, string>;
  sign(claims: Record<string, unknown>, subject: string, expiresIn?: string): Promise<string>;
}

async function provider(prefix: 'DEVELOPER' | 'NATIVE', runId: string): Promise<LoadProvider> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `load-${prefix.toLowerCase()}-${runId}`;
  const jwk: JWK = { ...(await exportJWK(publicKey)), alg: 'ES256', use: 'sig', kid };
  const issuer = `https://load-idp.invalid/${prefix.toLowerCase()}`;
  const audience = `sandbox-rewards-${prefix.toLowerCase()}-load`;
  return {
    env: {
      [`${prefix}_JWKS`]: JSON.stringify({ keys: [jwk] }),
      [`${prefix}_JWT_ISSUER`]: issuer,
      [`${prefix}_JWT_AUDIENCE`]: audience,
    },
    sign: (claims, subject, expiresIn = '6h') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(subject)
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(privateKey),
  };
}

export interface NativeSession {
  token: string;
  sid: string;
  creditsUserId: string;
}

export interface LoadIdentity {
  /** DEVELOPER_* and NATIVE_* variables for the verifying program. */
  env: Record<string, string>;
  developerEmail: string;
  developerToken: string;
  /** A developer session of the same provider for another e-mail (benchmarks with several developers). */
  signDeveloper(email: string): Promise<string>;
  /** One native session per account: k6 links player p of every game with session p. */
  nativeSessions: NativeSession[];
}

export async function createLoadIdentity(runId: string, nativeSessions: number): Promise<LoadIdentity> {
  const developer = await provider('DEVELOPER', runId);
  const native = await provider('NATIVE', runId);
  const developerEmail = `k6-${runId}@example.com`;
  const developerToken = await developer.sign({ email: developerEmail, email_verified: true }, `load|${runId}`);
  const sessions: NativeSession[] = [];
  for (let i = 0; i < nativeSessions; i++) {
    const creditsUserId = randomUUID();
    const sid = `load-${runId}-${i}`;
    sessions.push({
      token: await native.sign({ sid, preferred_username: `k6-player-${i}` }, creditsUserId),
      sid,
      creditsUserId,
    });
  }
  return {
    env: { ...developer.env, ...native.env },
    developerEmail,
    developerToken,
    signDeveloper: (email) => developer.sign({ email, email_verified: true }, `load|${runId}|${email}`),
    nativeSessions: sessions,
  };
}
