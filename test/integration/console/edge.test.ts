// The gateway's checks before a console action reaches the ledger, in the contract's order: platform switch,
// developer admission, content type (415), size on the raw bytes (413), JSON (400 INVALID_REQUEST), schema
// (400 invalid_action).

import { CONSOLE, type Developer, developer, expectData, expectError, RECORDS } from '../../support/console.ts';
import { admin, api, startTestSystem, type TestSystem } from '../../support/system.ts';

let system: TestSystem;
let dev: Developer;

beforeAll(async () => {
  system = await startTestSystem({ env: { ALLOWED_ORIGINS: 'https://console.example.com' } });
  dev = await developer(system);
});

afterAll(async () => {
  await system?.stop();
});

const LIMIT = 16_384;
const json = { 'Content-Type': 'application/json' };

/** A createOrganization body padded with JSON whitespace to exactly `size` bytes. */
function paddedAction(size: number): string {
  const text = JSON.stringify({ type: 'createOrganization', name: 'Padded' });
  return text.slice(0, -1) + ' '.repeat(size - Buffer.byteLength(text)) + '}';
}

/** Sends the body as a stream: chunked transfer encoding, no Content-Length. */
async function postChunked(token: string, body: string): Promise<{ status: number; body: any }> {
  const bytes = Buffer.from(body);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += 1000)
        controller.enqueue(bytes.subarray(offset, offset + 1000));
      controller.close();
    },
  });
  const response = await fetch(`${system.url}${CONSOLE}`, {
    method: 'POST',
    headers: { ...json, Authorization: `Bearer ${token}` },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: await response.json() };
}

describe('POST /api/developer/v1/console checks', () => {
  it('answers 401 UNAUTHORIZED before looking at the body', async () => {
    expectError(
      await api(system.url, 'POST', CONSOLE, { rawBody: 'not json', headers: { 'Content-Type': 'text/plain' } }),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: 'garbage', body: { type: 'createOrganization', name: 'X' } }),
      401,
      'UNAUTHORIZED',
    );
    // A game key never authorizes the console.
    expectError(
      await api(system.url, 'POST', CONSOLE, {
        token: `cr_sk_sandbox_${'A'.repeat(43)}`,
        body: { type: 'createOrganization', name: 'X' },
      }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('answers 403 INVALID_SESSION_ORIGIN for an origin outside ALLOWED_ORIGINS', async () => {
    const body = { type: 'createOrganization', name: 'X' };
    expectError(
      await api(system.url, 'POST', CONSOLE, {
        token: dev.token,
        body,
        headers: { Origin: 'https://evil.example.com' },
      }),
      403,
      'INVALID_SESSION_ORIGIN',
    );
    expectData(
      await api(system.url, 'POST', CONSOLE, {
        token: dev.token,
        body,
        headers: { Origin: 'https://console.example.com' },
      }),
      'DeveloperActionResult',
    );
  });

  it('answers 415 for a missing or other content type, even with an oversized body', async () => {
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: '{}' }),
      415,
      'INVALID_CONTENT_TYPE',
    );
    expectError(
      await api(system.url, 'POST', CONSOLE, {
        token: dev.token,
        rawBody: 'x'.repeat(LIMIT + 10),
        headers: { 'Content-Type': 'text/plain' },
      }),
      415,
      'INVALID_CONTENT_TYPE',
    );
    expectError(
      await api(system.url, 'POST', CONSOLE, {
        token: dev.token,
        rawBody: '{}',
        headers: { 'Content-Type': 'application/jsonx' },
      }),
      415,
      'INVALID_CONTENT_TYPE',
    );
  });

  it('accepts application/json with parameters', async () => {
    expectData(
      await api(system.url, 'POST', CONSOLE, {
        token: dev.token,
        rawBody: JSON.stringify({ type: 'createOrganization', name: 'Charset' }),
        headers: { 'Content-Type': 'Application/JSON; charset=utf-8' },
      }),
      'DeveloperActionResult',
    );
  });

  it('accepts exactly 16,384 bytes and answers 413 above, with or without Content-Length', async () => {
    expectData(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: paddedAction(LIMIT), headers: json }),
      'DeveloperActionResult',
    );
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: paddedAction(LIMIT + 1), headers: json }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    const chunkedOk = await postChunked(dev.token, paddedAction(LIMIT));
    expect(chunkedOk.status).toBe(200);
    const chunkedLarge = await postChunked(dev.token, paddedAction(LIMIT + 1));
    expectError({ ...chunkedLarge, headers: new Headers() }, 413, 'PAYLOAD_TOO_LARGE');
    // Multi-byte characters count as bytes, not characters: 5,462 three-byte characters are 16,386 bytes.
    const wide = JSON.stringify({ type: 'createOrganization', name: '€'.repeat(5462) });
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: wide, headers: json }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('answers 413 for an oversized body that is not JSON either', async () => {
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: '{'.repeat(LIMIT + 1), headers: json }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
  });

  it('answers 400 INVALID_REQUEST for a body that is not JSON or not UTF-8', async () => {
    for (const rawBody of ['', '{', '{"type": "createOrganization",}', 'undefined']) {
      expectError(
        await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody, headers: json }),
        400,
        'INVALID_REQUEST',
      );
    }
    const latin1 = Buffer.from('{"type":"createOrganization","name":"caf\xe9"}', 'latin1');
    expectError(
      await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody: new Uint8Array(latin1), headers: json }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('answers 405 with Allow for another method on the console path', async () => {
    const response = await api(system.url, 'PUT', CONSOLE, { token: dev.token, body: {} });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
    const records = await api(system.url, 'POST', RECORDS, { token: dev.token, body: {} });
    expectError(records, 405, 'method_not_allowed');
    expect(records.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS']);
  });

  it('answers 404 not_found (no Allow) for any method on an unknown path', async () => {
    for (const method of ['GET', 'DELETE', 'PROPFIND', 'OPTIONS']) {
      const response = await api(system.url, method, '/api/developer/v1/nothing-here', { token: dev.token });
      expectError(response, 404, 'not_found');
      expect(response.headers.get('allow')).toBeNull();
    }
  });

  // CONTRACT section 10: bodies are I-JSON. These used to be accepted (the last duplicate winning) or stored with
  // U+FFFD in place of the lone surrogate.
  it('answers 400 INVALID_REQUEST for a duplicated member name or a lone surrogate, and changes nothing', async () => {
    const tag = `Input ${Date.now()}`;
    for (const rawBody of [
      `{"type":"fundOrganization","type":"createOrganization","name":"${tag} duplicate"}`,
      `{"type":"createOrganization","name":"${tag} first","name":"${tag} second"}`,
      `{"type":"createOrganization","name":"${tag} \\ud800"}`,
      `{"type":"createOrganization","name":"${tag} \\udfff end"}`,
      `{"type":"createOrganization","name":"${tag}","unlimitedFunding":false,"\\u0075nlimitedFunding":false}`,
    ]) {
      const response = await api(system.url, 'POST', CONSOLE, { token: dev.token, rawBody, headers: json });
      expect({ rawBody, status: response.status, code: response.body?.error?.code }).toEqual({
        rawBody,
        status: 400,
        code: 'INVALID_REQUEST',
      });
    }
    const snapshot = expectData(await api(system.url, 'GET', CONSOLE, { token: dev.token }), 'DeveloperSnapshot');
    expect(snapshot.organizations.filter((o: { name: string }) => o.name.startsWith(tag))).toEqual([]);
  });
});

describe('platform switch', () => {
  it('answers 503 PLATFORM_DISABLED first on every console route while disabled', async () => {
    expect((await admin(system, 'PUT', '/platform', { enabled: false })).status).toBe(200);
    try {
      expectError(
        await api(system.url, 'POST', CONSOLE, { rawBody: 'x', headers: { 'Content-Type': 'text/plain' } }),
        503,
        'PLATFORM_DISABLED',
      );
      expectError(await api(system.url, 'GET', CONSOLE, { token: dev.token }), 503, 'PLATFORM_DISABLED');
      expectError(await api(system.url, 'GET', `${RECORDS}?bogus=1`), 503, 'PLATFORM_DISABLED');
    } finally {
      await admin(system, 'PUT', '/platform', { enabled: true });
    }
    expectData(await api(system.url, 'GET', CONSOLE, { token: dev.token }), 'DeveloperSnapshot');
  });
});

describe('GET endpoints', () => {
  it('require a developer session and answer Cache-Control: no-store', async () => {
    expectError(await api(system.url, 'GET', CONSOLE), 401, 'UNAUTHORIZED');
    expectError(await api(system.url, 'GET', `${RECORDS}?kind=events`), 401, 'UNAUTHORIZED');
    const response = await api(system.url, 'GET', CONSOLE, { token: dev.token });
    expectData(response, 'DeveloperSnapshot');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('refuse an unverified e-mail', async () => {
    const { developerToken } = await import('../../support/system.ts');
    const token = await developerToken(system, dev.email, { emailVerified: false });
    expectError(await api(system.url, 'GET', CONSOLE, { token }), 403, 'EMAIL_VERIFICATION_REQUIRED');
  });
});
