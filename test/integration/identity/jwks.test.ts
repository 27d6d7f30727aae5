// Developer sessions of a real identity provider (CONTRACT sections 1 and 4): an inline DEVELOPER_JWKS and a
// DEVELOPER_JWKS_URL served by a local HTTP server, key rotation, algorithm restrictions, forged tokens, and the
// local development key never being trusted by a process that was given a JWKS.

import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin, developerToken, startTestSystem, type TestSystem } from '../../support/system.ts';
import {
  access,
  errorBody,
  hs256WithPublicKey,
  jwks,
  nowSeconds,
  sign,
  signRsaWith,
  type TestKey,
  testKey,
  unsecuredToken,
  waitUntil,
} from './support.ts';

const ISSUER = 'https://idp.test.example/';
const AUDIENCE = 'sandbox-rewards-api';

async function invitedClaims(system: TestSystem) {
  const email = `dev-${randomUUID().slice(0, 8)}@example.com`;
  expect((await admin(system, 'POST', '/invitations', { email })).status).toBe(200);
  return { sub: `idp|${randomUUID()}`, email, email_verified: true };
}

describe('inline DEVELOPER_JWKS', () => {
  let system: TestSystem;
  const keys: Record<string, TestKey> = {};

  beforeAll(async () => {
    keys.rsa = await testKey('RS256');
    keys.ec = await testKey('ES256');
    keys.ed = await testKey('EdDSA');
    keys.es384 = await testKey('ES384');
    // An RSA key published without `alg`: only the verifier's allow-list stops RS512 or PS256 with it.
    keys.rsaNoAlg = await testKey('RS256');
    delete keys.rsaNoAlg.publicJwk.alg;
    system = await startTestSystem({
      env: {
        DEVELOPER_JWKS: jwks(keys.rsa, keys.ec, keys.ed, keys.es384, keys.rsaNoAlg),
        DEVELOPER_JWT_ISSUER: ISSUER,
        DEVELOPER_JWT_AUDIENCE: AUDIENCE,
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
  });

  it('admits tokens signed with RS256, ES256 and EdDSA keys of the JWKS', async () => {
    for (const name of ['rsa', 'ec', 'ed']) {
      const claims = await invitedClaims(system);
      const response = await access(system, await sign(keys[name]!, claims, { issuer: ISSUER, audience: AUDIENCE }));
      expect({ name, status: response.status, body: response.body }).toEqual({
        name,
        status: 200,
        body: { data: { authorized: true, email: claims.email, mode: 'sandbox' } },
      });
    }
  });

  it('never trusts the local development key once a JWKS is given', async () => {
    const claims = await invitedClaims(system);
    const local = await developerToken(system, claims.email);
    const response = await access(system, local);
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  it('refuses other algorithms, even with a key of the JWKS: RS512, PS256, ES384', async () => {
    const claims = await invitedClaims(system);
    const tokens = {
      RS512: signRsaWith(keys.rsaNoAlg!, 'RS512', claims, { issuer: ISSUER, audience: AUDIENCE }),
      PS256: signRsaWith(keys.rsaNoAlg!, 'PS256', claims, { issuer: ISSUER, audience: AUDIENCE }),
      ES384: await sign(keys.es384!, claims, { issuer: ISSUER, audience: AUDIENCE }),
    };
    for (const [alg, jwt] of Object.entries(tokens)) {
      const response = await access(system, jwt);
      expect({ alg, status: response.status, body: response.body }).toEqual({
        alg,
        status: 401,
        body: errorBody('UNAUTHORIZED'),
      });
    }
    // The same claims with RS256 and the same key pass: the algorithm alone was refused.
    expect(
      (await access(system, await sign(keys.rsaNoAlg!, claims, { issuer: ISSUER, audience: AUDIENCE }))).status,
    ).toBe(200);
  });

  it('refuses alg none and HS256 keyed with a trusted public key (PEM or JWK text)', async () => {
    const claims = await invitedClaims(system);
    const full = { ...claims, iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 3600 };
    const forged = [
      unsecuredToken(full),
      hs256WithPublicKey(keys.rsa!, full),
      hs256WithPublicKey({ kid: keys.ec!.kid, publicPem: JSON.stringify(keys.ec!.publicJwk) }, full),
    ];
    for (const jwt of forged) {
      const response = await access(system, jwt);
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody('UNAUTHORIZED'));
    }
  });

  it('refuses an unknown kid, a key that is not in the JWKS under a trusted kid, wrong issuer or audience', async () => {
    const claims = await invitedClaims(system);
    const stranger = await testKey('ES256');
    const tokens = {
      unknownKid: await sign(stranger, claims, { issuer: ISSUER, audience: AUDIENCE }),
      stolenKid: await sign(stranger, claims, { issuer: ISSUER, audience: AUDIENCE, kid: keys.ec!.kid }),
      issuer: await sign(keys.ec!, claims, { issuer: 'https://idp.test.example/other', audience: AUDIENCE }),
      audience: await sign(keys.ec!, claims, { issuer: ISSUER, audience: 'someone-else' }),
      noIssuer: await sign(keys.ec!, claims, { audience: AUDIENCE }),
      noAudience: await sign(keys.ec!, claims, { issuer: ISSUER }),
    };
    for (const [name, jwt] of Object.entries(tokens)) {
      const response = await access(system, jwt);
      expect({ name, status: response.status, body: response.body }).toEqual({
        name,
        status: 401,
        body: errorBody('UNAUTHORIZED'),
      });
    }
  });
});

describe('DEVELOPER_JWKS_URL', () => {
  const REFRESH_COOLDOWN_MS = 300;
  let system: TestSystem;
  let server: Server;
  let served: { status: number; body: string };
  let fetches = 0;
  let jwksUrl: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url !== '/.well-known/jwks.json') {
        response.writeHead(404).end();
        return;
      }
      fetches++;
      response.writeHead(served.status, { 'Content-Type': 'application/json' }).end(served.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
    served = { status: 200, body: jwks(await testKey('ES256', 'placeholder')) };
    system = await startTestSystem({
      env: {
        DEVELOPER_JWKS_URL: jwksUrl,
        DEVELOPER_JWT_ISSUER: ISSUER,
        DEVELOPER_JWT_AUDIENCE: AUDIENCE,
        JWKS_REFRESH_COOLDOWN_MS: String(REFRESH_COOLDOWN_MS),
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('fetches the key set once and caches it, picks up a rotated key (new kid) after the cool-down, drops the old one', async () => {
    const claims = await invitedClaims(system);
    const first = await testKey('RS256', 'key-2026-01');
    served = { status: 200, body: jwks(first) };
    const firstToken = await sign(first, claims, { issuer: ISSUER, audience: AUDIENCE });
    // The placeholder set may already be cached: the unknown kid refetches once the cool-down has passed.
    await waitUntil(
      'the first key is accepted',
      () => access(system, firstToken),
      (r) => r.status === 200,
    );
    const fetchesAfterFirst = fetches;
    for (let i = 0; i < 5; i++) expect((await access(system, firstToken)).status).toBe(200);
    expect(fetches).toBe(fetchesAfterFirst);

    // Rotation: the provider now publishes only a new key with a new kid.
    const second = await testKey('ES256', 'key-2026-02');
    served = { status: 200, body: jwks(second) };
    const secondToken = await sign(second, claims, { issuer: ISSUER, audience: AUDIENCE });
    const accepted = await waitUntil(
      'the rotated key is accepted',
      () => access(system, secondToken),
      (r) => r.status !== 401,
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ data: { authorized: true, email: claims.email, mode: 'sandbox' } });
    expect(fetches).toBeGreaterThan(fetchesAfterFirst);

    // The old key left the set: its tokens are refused from now on.
    const old = await access(system, firstToken);
    expect(old.status).toBe(401);
    expect(old.body).toEqual(errorBody('UNAUTHORIZED'));
  });

  it('while the provider is down: known keys keep working, a new kid answers 503 AUTH_UNAVAILABLE, recovery after', async () => {
    const claims = await invitedClaims(system);
    const known = await testKey('EdDSA', 'key-known');
    served = { status: 200, body: jwks(known) };
    const knownToken = await sign(known, claims, { issuer: ISSUER, audience: AUDIENCE });
    await waitUntil(
      'the known key is accepted',
      () => access(system, knownToken),
      (r) => r.status === 200,
    );

    served = { status: 500, body: 'provider down' };
    const next = await testKey('ES256', 'key-next');
    const nextToken = await sign(next, claims, { issuer: ISSUER, audience: AUDIENCE });
    const outage = await waitUntil(
      'the new kid meets the outage',
      () => access(system, nextToken),
      (r) => r.status === 503,
    );
    expect(outage.body).toEqual(errorBody('AUTH_UNAVAILABLE'));
    expect((await access(system, knownToken)).status).toBe(200);

    served = { status: 200, body: jwks(known, next) };
    const recovered = await waitUntil(
      'the provider is back',
      () => access(system, nextToken),
      (r) => r.status === 200,
    );
    expect(recovered.body.data.email).toBe(claims.email);
  });
});
