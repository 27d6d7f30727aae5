// The local development identity provider of `npm start` when no JWKS is configured (CONTRACT section 1): an
// ES256 key pair per audience kept under DATA_DIR, trusted by this process only. `npm run dev:token` signs with it.
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';

export type SessionKind = 'developer' | 'native';

export const DEV_ISSUER = 'sandbox-rewards-dev-idp';
export const devAudience = (kind: SessionKind) => `sandbox-rewards-${kind}`;

/**
 * The subject of a developer of the local provider: stable per e-mail (case-insensitive), so that every token signed
 * for one e-mail, by `npm run dev:token` or by the demo, is the same developer.
 */
export function developerSubject(email: string): string {
  return `dev|${createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 24)}`;
}

export interface DevProvider {
  kind: SessionKind;
  issuer: string;
  audience: string;
  publicJwks: { keys: JWK[] };
  sign(claims: Record<string, unknown>, options?: { expiresIn?: string; subject?: string }): Promise<string>;
}

/** Loads the provider's key from DATA_DIR, creating it on first use. */
export async function loadDevProvider(dataDir: string, kind: SessionKind): Promise<DevProvider> {
  const dir = join(dataDir, 'dev-identity');
  const file = join(dir, `${kind}.private.jwk.json`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const created = { ...(await exportJWK(privateKey)), alg: 'ES256', kid: `dev-${kind}-${Date.now().toString(36)}` };
    // Written whole under another name, then linked into place: of processes starting together on one DATA_DIR (the
    // programs run apart, `npm run dev:split`), the first link wins and every one reads that key, never half a file.
    const temporary = `${file}.${process.pid}.${randomUUID()}`;
    writeFileSync(temporary, JSON.stringify(created), { mode: 0o600 });
    try {
      linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temporary);
    }
  }
  const privateJwk = JSON.parse(readFileSync(file, 'utf8')) as JWK;
  const { d: _d, ...publicJwk } = privateJwk;
  const key = await importJWK(privateJwk, 'ES256');
  const issuer = DEV_ISSUER;
  const audience = devAudience(kind);
  return {
    kind,
    issuer,
    audience,
    publicJwks: { keys: [{ ...publicJwk, use: 'sig' }] },
    async sign(claims, options = {}) {
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid as string, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '12h');
      if (options.subject) jwt.setSubject(options.subject);
      return jwt.sign(key);
    },
  };
}
