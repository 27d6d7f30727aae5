// One HTTP attempt of a webhook message: POST with the Standard Webhooks headers, answered within the timeout or
// given up; redirects are not followed (a 3xx is a failed attempt); the response body is read up to a small bound and
// the connection dropped after it; unless private addresses are allowed (addresses.ts), the URL's port must be an
// allowed one and every address the host resolves to a public one, both checked before connecting, and the connection
// goes to the checked address (the lookup is ours).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isPublicAddress, portProblem, WEBHOOK_DEFAULT_PORTS } from './addresses.ts';

export const WEBHOOK_TIMEOUT_MS = 15_000;
/** The most characters of a response body kept (and bytes read). */
export const RESPONSE_EXCERPT_MAX = 1024;

export interface SendResult {
  statusCode: number | undefined;
  error: string | undefined;
  responseExcerpt: string;
}

/** A DNS lookup that refuses a name whose addresses are not all public. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 0);
    const list = addresses as unknown as LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused || list.length === 0) {
      const blocked = new Error(`${hostname} resolves to a non-public address (${refused?.address ?? 'none'})`);
      (blocked as NodeJS.ErrnoException).code = 'WEBHOOK_ADDRESS_REFUSED';
      return callback(blocked, '', 0);
    }
    if ((options as { all?: boolean }).all)
      return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    const first = list[0]!;
    callback(null, first.address, first.family);
  });
};

export function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { allowPrivateAddresses: boolean; allowedPorts?: readonly number[]; timeoutMs: number },
): Promise<SendResult> {
  const target = new URL(url);
  // The same port rule as when the URL was stored: a URL stored under other settings is not sent to.
  const refusedPort = portProblem(target, {
    allowPrivateAddresses: options.allowPrivateAddresses,
    allowedPorts: options.allowedPorts ?? WEBHOOK_DEFAULT_PORTS,
  });
  if (refusedPort) return Promise.resolve({ statusCode: undefined, error: refusedPort, responseExcerpt: '' });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      agent: false,
      ...(options.allowPrivateAddresses ? {} : { lookup: publicOnlyLookup }),
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ statusCode: undefined, error: `no answer within ${options.timeoutMs} ms`, responseExcerpt: '' });
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      finish({ statusCode: undefined, error: error.message || error.code || 'request failed', responseExcerpt: '' });
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let length = 0;
      const done = () => {
        const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_EXCERPT_MAX);
        finish({ statusCode: response.statusCode, error: undefined, responseExcerpt: excerpt });
        response.destroy();
      };
      response.on('data', (chunk: Buffer) => {
        if (length < RESPONSE_EXCERPT_MAX) chunks.push(chunk.subarray(0, RESPONSE_EXCERPT_MAX - length));
        length += chunk.length;
        if (length >= RESPONSE_EXCERPT_MAX) done();
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}
