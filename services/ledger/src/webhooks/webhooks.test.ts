// The webhook pieces that need no database: the URL rule and the address check, the signature (checked with the
// `standardwebhooks` package), the secret's encryption, the backoff, and one attempt against real local HTTP servers
// (no redirect followed, the body read up to its bound, a private address refused after DNS resolution).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { AppError } from '#runtime/errors.ts';
import { checkWebhookUrl, isPublicAddress, parseAllowedPorts, type WebhookAddressPolicy } from './addresses.ts';
import { decryptSecret, encryptSecret, newWebhookSecret, signWebhook } from './secrets.ts';
import { RESPONSE_EXCERPT_MAX, sendWebhook } from './sender.ts';
import { nextAfter, retryDelayMs, WEBHOOK_RETRY_DELAY_MAX_MS, WEBHOOK_RETRY_WINDOW_MS } from './worker.ts';

const PUBLIC_ONLY: WebhookAddressPolicy = { allowPrivateAddresses: false, allowedPorts: [443, 80] };
const PRIVATE_TOO: WebhookAddressPolicy = { allowPrivateAddresses: true, allowedPorts: [443, 80] };

describe('the URL rule', () => {
  it.each([
    'http://hooks.example.com/',
    'https://127.0.0.1/',
    'https://10.0.0.8/',
    'https://172.20.1.1/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest',
    'https://[::1]/',
    'https://[fd00::1]/',
    'https://[::ffff:10.0.0.1]/',
    'https://localhost/',
    'https://api.localhost/',
    // The trailing dot names the same host; IPv6 forms that embed an IPv4 loopback or private address.
    'https://localhost./',
    'https://LOCALHOST.../',
    'https://api.localhost./',
    'https://[::127.0.0.1]/',
    'https://[::7f00:1]/',
    'https://[::ffff:0:7f00:1]/',
    'https://[::ffff:0:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::10.0.0.1]/',
    'https://[::ffff:0:a9fe:a9fe]/',
    'https://[64:ff9b::7f00:1]/',
  ])('refuses %s without private addresses', (url) => {
    expect(() => checkWebhookUrl(url, PUBLIC_ONLY)).toThrow(AppError);
    expect(() => checkWebhookUrl(url, PUBLIC_ONLY)).toThrow(/^url: must be https:\/\/ to a public address/);
  });

  it('allows them where private addresses are allowed, and public https everywhere', () => {
    expect(checkWebhookUrl('http://127.0.0.1:8080/in', PRIVATE_TOO)).toBe('http://127.0.0.1:8080/in');
    expect(checkWebhookUrl('http://localhost.:39217/in', PRIVATE_TOO)).toBe('http://localhost.:39217/in');
    expect(checkWebhookUrl('https://hooks.example.com/in?x=1', PUBLIC_ONLY)).toBe('https://hooks.example.com/in?x=1');
    expect(checkWebhookUrl('https://8.8.8.8/in', PUBLIC_ONLY)).toBe('https://8.8.8.8/in');
    expect(checkWebhookUrl('https://[::ffff:8.8.8.8]/in', PUBLIC_ONLY)).toBe('https://[::ffff:808:808]/in');
  });

  it('allows ports 443 and 80 and WEBHOOK_ALLOWED_PORTS for public addresses; any port with private ones', () => {
    expect(checkWebhookUrl('https://hooks.example.com:443/in', PUBLIC_ONLY)).toBe('https://hooks.example.com/in');
    expect(checkWebhookUrl('https://hooks.example.com:80/in', PUBLIC_ONLY)).toBe('https://hooks.example.com:80/in');
    for (const url of ['https://hooks.example.com:8443/', 'https://8.8.8.8:22/', 'https://hooks.example.com:6379/']) {
      expect(() => checkWebhookUrl(url, PUBLIC_ONLY)).toThrow(
        /^url: port \d+ is not allowed \(443, 80 and WEBHOOK_ALLOWED_PORTS/,
      );
    }
    const withMore = { allowPrivateAddresses: false, allowedPorts: parseAllowedPorts(' 8443, 9000 ') };
    expect(withMore.allowedPorts).toEqual([443, 80, 8443, 9000]);
    expect(checkWebhookUrl('https://hooks.example.com:8443/', withMore)).toBe('https://hooks.example.com:8443/');
    expect(() => checkWebhookUrl('https://hooks.example.com:8444/', withMore)).toThrow(/port 8444/);
    expect(checkWebhookUrl('http://127.0.0.1:6379/', PRIVATE_TOO)).toBe('http://127.0.0.1:6379/');
  });

  it('reads WEBHOOK_ALLOWED_PORTS strictly', () => {
    expect(parseAllowedPorts(undefined)).toEqual([443, 80]);
    expect(parseAllowedPorts('')).toEqual([443, 80]);
    for (const text of ['0', '65536', '80a', 'https', '-1', '1.5']) {
      expect(() => parseAllowedPorts(text)).toThrow(/WEBHOOK_ALLOWED_PORTS/);
    }
  });

  it('refuses credentials, fragments and other schemes everywhere', () => {
    for (const url of ['https://a:b@hooks.example.com/', 'https://hooks.example.com/#x', 'ftp://hooks.example.com/']) {
      expect(() => checkWebhookUrl(url, PRIVATE_TOO)).toThrow(/^url: /);
    }
  });

  it('tells public addresses from the rest', () => {
    expect(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'].map(isPublicAddress)).toEqual([true, true, true]);
    expect(['::ffff:8.8.8.8', '::ffff:808:808'].map(isPublicAddress)).toEqual([true, true]);
    const notPublic = [
      '0.0.0.0',
      '100.64.0.1',
      '::',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::7f00:1',
      '::8.8.8.8',
      '::ffff:0:7f00:1',
      '::ffff:0:808:808',
      'not-an-ip',
    ];
    expect(notPublic.filter(isPublicAddress)).toEqual([]);
  });
});

describe('signing and secrets', () => {
  it('signs so that the standardwebhooks package verifies it', () => {
    const secret = newWebhookSecret();
    expect(secret.text).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: 'webhook.test', timestamp: '2026-11-28T00:00:00.000Z', data: {} });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'b9e3a6a4-0d2c-4f5e-8a41-0f4d1f3c2a11',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret.raw, 'b9e3a6a4-0d2c-4f5e-8a41-0f4d1f3c2a11', timestamp, body),
    };
    expect(new Webhook(secret.text).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret().text).verify(body, headers)).toThrow();
  });

  it('encrypts a secret so that only its key reads it back', () => {
    const key = Buffer.alloc(32, 7);
    const secret = newWebhookSecret();
    const stored = encryptSecret(key, secret.raw);
    expect(stored).toHaveLength(60);
    expect(decryptSecret(key, stored).equals(secret.raw)).toBe(true);
    expect(() => decryptSecret(Buffer.alloc(32, 8), stored)).toThrow();
  });
});

describe('the backoff', () => {
  it('doubles per attempt within 0.5..1.5 of its value, at most 4 hours, with jitter', () => {
    expect(retryDelayMs(1, 5000, () => 0)).toBe(2500);
    expect(retryDelayMs(1, 5000, () => 1)).toBe(7500);
    expect(retryDelayMs(4, 5000, () => 0.5)).toBe(40_000);
    expect(retryDelayMs(40, 5000, () => 0.5)).toBe(WEBHOOK_RETRY_DELAY_MAX_MS);
  });

  it('stops doubling at WEBHOOK_RETRY_DELAY_MAX_MS when it is set lower', () => {
    expect(retryDelayMs(4, 1000, () => 0.5, 15_000)).toBe(8000);
    expect(retryDelayMs(5, 1000, () => 0.5, 15_000)).toBe(15_000);
    expect(retryDelayMs(40, 1000, () => 1, 15_000)).toBe(22_500);
    const failure = { statusCode: undefined, error: 'connection refused', responseExcerpt: '' };
    const next = nextAfter(failure, { attempt: 30, retryStartedAtMs: 0 }, 60_000, 1000, 15_000);
    expect(next.kind === 'retry' && next.retryInMs >= 7500 && next.retryInMs <= 22_500).toBe(true);
  });

  it('retries until 24 hours after the retries began, then fails; a 2xx delivers', () => {
    const failure = { statusCode: 500, error: undefined, responseExcerpt: '' };
    expect(nextAfter(failure, { attempt: 3, retryStartedAtMs: 0 }, WEBHOOK_RETRY_WINDOW_MS - 1, 5000).kind).toBe(
      'retry',
    );
    expect(nextAfter(failure, { attempt: 30, retryStartedAtMs: 0 }, WEBHOOK_RETRY_WINDOW_MS, 5000).kind).toBe('failed');
    expect(nextAfter({ ...failure, statusCode: 204 }, { attempt: 1, retryStartedAtMs: 0 }, 0, 5000).kind).toBe(
      'delivered',
    );
  });

  it('keeps retrying for at least 24 hours in the worst case of the jitter', () => {
    let elapsed = 0;
    let attempt = 1;
    while (elapsed < WEBHOOK_RETRY_WINDOW_MS) {
      elapsed += retryDelayMs(attempt, 5000, () => 1);
      attempt += 1;
    }
    // Attempts keep coming until the window ends: each pause is at most 6 hours.
    expect(retryDelayMs(attempt, 5000, () => 1)).toBeLessThanOrEqual(1.5 * WEBHOOK_RETRY_DELAY_MAX_MS);
    expect(attempt).toBeGreaterThan(10);
  });
});

describe('one attempt', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/redirect') {
        response.writeHead(302, { location: '/ok' }).end();
      } else if (request.url === '/big') {
        response.writeHead(200).end('x'.repeat(100_000));
      } else {
        response.writeHead(200).end('fine');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const options = { allowPrivateAddresses: true, timeoutMs: 15_000 };

  it('does not follow a redirect: the 3xx is the answer', async () => {
    expect(await sendWebhook(`${base}/redirect`, {}, '{}', options)).toEqual({
      statusCode: 302,
      error: undefined,
      responseExcerpt: '',
    });
  });

  it('reads the response body up to its bound', async () => {
    const result = await sendWebhook(`${base}/big`, {}, '{}', options);
    expect(result.statusCode).toBe(200);
    expect(result.responseExcerpt).toHaveLength(RESPONSE_EXCERPT_MAX);
  });

  it('refuses a name that resolves to a private address unless allowed', async () => {
    const port = (server.address() as AddressInfo).port;
    const refused = await sendWebhook(`http://localhost:${port}/ok`, {}, '{}', {
      ...options,
      allowPrivateAddresses: false,
      allowedPorts: [443, 80, port],
    });
    expect(refused.statusCode).toBeUndefined();
    expect(refused.error).toMatch(/resolves to a non-public address/);
    expect((await sendWebhook(`http://localhost:${port}/ok`, {}, '{}', options)).responseExcerpt).toBe('fine');
  });

  it('refuses a port that is not allowed before connecting, unless private addresses are allowed', async () => {
    const port = (server.address() as AddressInfo).port;
    let connections = 0;
    server.on('connection', () => {
      connections += 1;
    });
    const refused = await sendWebhook(`http://localhost:${port}/ok`, {}, '{}', {
      ...options,
      allowPrivateAddresses: false,
    });
    expect(refused).toEqual({
      statusCode: undefined,
      error: expect.stringMatching(new RegExp(`^port ${port} is not allowed`)),
      responseExcerpt: '',
    });
    expect(connections).toBe(0);
    // The development default: a local receiver on any port.
    expect((await sendWebhook(`http://localhost:${port}/ok`, {}, '{}', options)).responseExcerpt).toBe('fine');
    expect(connections).toBe(1);
  });
});
