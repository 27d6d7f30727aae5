// The token verifier's memory of verified tokens (token-verifier.ts, VerifiedTokens): the same text verifies again
// without a signature check, any other text is checked, and a key set fetched anew forgets what the old one verified.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { createTokenVerifier } from './token-verifier.ts';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'sandbox-rewards-test';

async function signer(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const sign = (claims: Record<string, unknown> = {}) =>
    new SignJWT({ email: 'dev@example.com', email_verified: true, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('subject-1')
      .setExpirationTime((claims.exp as number | undefined) ?? '10m')
      .sign(privateKey);
  return { jwk, sign };
}

const OPTIONS = { jwksRefreshCooldownMs: 0, requiredClaims: ['sub', 'email', 'email_verified'] };

describe('token verifier: verified tokens remembered', () => {
  it('verifies the same text again, and checks every other text (an altered signature stays invalid)', async () => {
    const key = await signer('k1');
    const verifier = createTokenVerifier(
      { jwks: JSON.stringify({ keys: [key.jwk] }), issuer: ISSUER, audience: AUDIENCE },
      undefined,
      OPTIONS,
    );
    const token = await key.sign();
    const first = await verifier.verify(token);
    expect(first).toMatchObject({ ok: true, payload: { sub: 'subject-1' } });
    expect(await verifier.verify(token)).toEqual(first);
    const signature = token.slice(token.lastIndexOf('.') + 1);
    const altered = `${token.slice(0, token.lastIndexOf('.') + 1)}${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(await verifier.verify(altered)).toEqual({ ok: false, reason: 'invalid' });
    // Expired when signed: never remembered past its exp (jose's clock tolerance aside).
    expect(await verifier.verify(await key.sign({ exp: Math.floor(Date.now() / 1000) - 60 }))).toEqual({
      ok: false,
      reason: 'invalid',
    });
  });

  describe('with a JWKS URL', () => {
    let server: Server;
    let keys: JWK[] = [];
    beforeAll(async () => {
      server = createServer((_request, response) => {
        response.setHeader('Content-Type', 'application/json');
        response.end(JSON.stringify({ keys }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    it('forgets the tokens of a key that a new fetch of the set no longer holds', async () => {
      const old = await signer('old');
      const next = await signer('next');
      keys = [old.jwk];
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
      const verifier = createTokenVerifier({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE }, undefined, OPTIONS);
      const oldToken = await old.sign();
      expect(await verifier.verify(oldToken)).toMatchObject({ ok: true });
      // The provider rotates: the old key leaves the set. A token of the new key makes the verifier fetch it again.
      keys = [next.jwk];
      expect(await verifier.verify(await next.sign())).toMatchObject({ ok: true });
      expect(await verifier.verify(oldToken)).toEqual({ ok: false, reason: 'invalid' });
    });
  });
});
