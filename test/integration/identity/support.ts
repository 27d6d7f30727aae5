// Tokens for the identity tests: keys of a test identity provider, tokens signed with any claims, and forged tokens
// (alg `none`, HS256 keyed with the public key) that a correct verifier refuses.
import { constants, createHmac, sign as cryptoSign, KeyObject, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { api, type TestSystem } from '../../support/system.ts';

export type Alg = 'RS256' | 'ES256' | 'EdDSA' | 'RS512' | 'PS256' | 'ES384';

export interface TestKey {
  alg: Alg;
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The public key as PEM (SPKI): the "secret" of the HS256 key-confusion attack. */
  publicPem: string;
}

export async function testKey(alg: Alg, kid = `kid-${randomUUID().slice(0, 8)}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return {
    alg,
    kid,
    privateKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
    publicPem: await exportSPKI(publicKey),
  };
}

export function jwks(...keys: TestKey[]): string {
  return JSON.stringify({ keys: keys.map((k) => k.publicJwk) });
}

export interface SignOptions {
  issuer?: string | undefined;
  audience?: string | undefined;
  /** Seconds since the epoch; null: no `exp` claim. Default: one hour from now. */
  exp?: number | null;
  kid?: string;
  /** Header `alg` when it differs from the key's (a token that lies about its algorithm). */
  alg?: string;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export async function sign(
  key: { privateKey: CryptoKey | Uint8Array; alg: string; kid?: string },
  claims: Record<string, unknown>,
  options: SignOptions = {},
): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
    .setIssuedAt();
  if (options.issuer) jwt.setIssuer(options.issuer);
  if (options.audience) jwt.setAudience(options.audience);
  if (options.exp !== null) jwt.setExpirationTime(options.exp ?? nowSeconds() + 3600);
  return jwt.sign(key.privateKey);
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An unsecured JWT (`alg: none`, empty signature). */
export function unsecuredToken(claims: Record<string, unknown>): string {
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
}

/** HS256 keyed with the provider's public key (as PEM text): the classic algorithm-confusion forgery. */
export function hs256WithPublicKey(key: { kid: string; publicPem: string }, claims: Record<string, unknown>): string {
  const signingInput = `${b64url({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${b64url(claims)}`;
  const mac = createHmac('sha256', key.publicPem).update(signingInput).digest('base64url');
  return `${signingInput}.${mac}`;
}

/**
 * An RSA key signing with RS512 or PS256 (WebCrypto keys are bound to one algorithm, so this signs with node:crypto):
 * a token of an algorithm the verifier must refuse although the key itself is trusted.
 */
export function signRsaWith(
  key: TestKey,
  alg: 'RS512' | 'PS256',
  claims: Record<string, unknown>,
  options: { issuer: string; audience: string },
): string {
  const payload = {
    ...claims,
    iss: options.issuer,
    aud: options.audience,
    iat: nowSeconds(),
    exp: nowSeconds() + 3600,
  };
  const signingInput = `${b64url({ alg, typ: 'JWT', kid: key.kid })}.${b64url(payload)}`;
  const privateKey = KeyObject.from(key.privateKey);
  const signature =
    alg === 'RS512'
      ? cryptoSign('sha512', Buffer.from(signingInput), privateKey)
      : cryptoSign('sha256', Buffer.from(signingInput), {
          key: privateKey,
          padding: constants.RSA_PKCS1_PSS_PADDING,
          saltLength: 32,
        });
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** The local development provider's key of a test system (npm start's provider), to sign arbitrary claims. */
export async function devKey(system: TestSystem, kind: 'developer' | 'native') {
  const file = join(system.dataDir, 'dev-identity', `${kind}.private.jwk.json`);
  const jwk = JSON.parse(readFileSync(file, 'utf8')) as JWK;
  const { d: _private, ...publicJwk } = jwk;
  return {
    alg: 'ES256',
    kid: jwk.kid as string,
    privateKey: (await importJWK(jwk, 'ES256')) as CryptoKey,
    publicPem: await exportSPKI((await importJWK(publicJwk, 'ES256')) as CryptoKey),
  };
}

export function access(system: { url: string }, token?: string, headers: Record<string, string> = {}) {
  return api(system.url, 'GET', '/api/developer/v1/access', { token, headers });
}

export const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

export async function waitUntil<T>(
  what: string,
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
