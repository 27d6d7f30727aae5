// Reading a JSON body with the API's limits, in the contract's order: content type (415), size counted on the raw
// bytes whether or not Content-Length is sent (413), UTF-8, JSON syntax and I-JSON (400; CONTRACT section 10: a
// duplicated member name, a lone surrogate or a number outside the range of a double is not JSON here).
// readJsonBodyDeferring leaves the faults inside one member of the root object to its caller (the events route:
// CONTRACT section 10 makes a lone surrogate or an out-of-range number inside an event's `metadata` a metadata fault,
// checked after the schema).

import type Koa from 'koa';
import { AppError, type SingleStatusCode } from '../errors.ts';
import { parseIJson } from './i-json.ts';

export const JSON_BODY_LIMIT_BYTES = 16_384;

export interface JsonBodyOptions {
  limitBytes?: number;
  /** Code for a body that is not JSON. */
  invalidJsonCode?: SingleStatusCode;
}

export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

export async function readJsonBody(ctx: Koa.Context, options: JsonBodyOptions = {}): Promise<unknown> {
  const parsed = parseIJson(await readJsonText(ctx, options));
  if (!parsed.ok) throw invalidJson(options, parsed.reason);
  return parsed.value;
}

export interface DeferredJsonBody {
  value: unknown;
  /**
   * The first lone surrogate or out-of-range number inside the root object's member named to readJsonBodyDeferring
   * (then the body is I-JSON everywhere else); undefined when there is none.
   */
  memberFault?: string;
}

/**
 * readJsonBody, except that a lone surrogate or a number outside a double's range found only inside the root
 * object's member `member` (a value or a member name, at any depth) does not throw: the value comes back with
 * `memberFault`, and the caller must refuse it in its own order. A duplicated member name still throws, wherever it is.
 */
export async function readJsonBodyDeferring(
  ctx: Koa.Context,
  member: string,
  options: JsonBodyOptions = {},
): Promise<DeferredJsonBody> {
  const parsed = parseIJson(await readJsonText(ctx, options), member);
  if (parsed.ok) return { value: parsed.value };
  if (parsed.member === undefined) throw invalidJson(options, parsed.reason);
  return { value: parsed.value, memberFault: parsed.reason };
}

const invalidJson = (options: JsonBodyOptions, message: string) =>
  new AppError(options.invalidJsonCode ?? 'INVALID_REQUEST', message);

/** The body's text: content type (415), size (413), UTF-8 (400). */
async function readJsonText(ctx: Koa.Context, options: JsonBodyOptions): Promise<string> {
  const limit = options.limitBytes ?? JSON_BODY_LIMIT_BYTES;
  if (!isJsonContentType(ctx.get('Content-Type'))) {
    throw new AppError('INVALID_CONTENT_TYPE', 'Content-Type must be application/json.');
  }
  const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', `The JSON body exceeds ${limit} bytes.`);
  const declared = ctx.get('Content-Length');
  if (declared !== '' && Number(declared) > limit) throw tooLarge();
  const body = await readRaw(ctx.req, limit, tooLarge);
  try {
    return UTF8.decode(body);
  } catch {
    throw invalidJson(options, 'The body is not valid UTF-8.');
  }
}

/**
 * One decoder for every body: without `stream`, each decode() starts afresh (WHATWG Encoding), so sharing it changes
 * nothing; a leading byte order mark is dropped (ignoreBOM false), invalid UTF-8 throws (fatal).
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The raw body, counted as it streams in: the 413 as soon as the bytes pass `limit` (the rest of the body is then
 * read and dropped, so the 413 goes out on the connection). Plain listeners, not the
 * stream's async iterator, which costs a promise and a tick per chunk and event (a visible share of the ingest edge's
 * CPU per event at npm run bench's peak, docs/benchmarks.md).
 */
function readRaw(req: Koa.Context['req'], limit: number, tooLarge: () => AppError): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    // Read to its end already (nothing here does that): an empty body, as the async iterator would give.
    if (req.readableEnded) {
      resolve(Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    // Closed before its end (the client went away): Node's premature-close error, as the async iterator rejected.
    const onClose = () => {
      done();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
