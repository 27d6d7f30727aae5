// Reading a JSON body with the API's limits, in the contract's order: content type (415), size counted on the raw
// bytes whether or not Content-Length is sent (413), UTF-8, JSON syntax and I-JSON (400; CONTRACT section 10: a
// duplicated member name, a lone surrogate or a number outside the range of a double is not JSON here).
// readJsonBodyDeferring leaves the faults inside one member of the root object to its caller (the events route:
// CONTRACT section 10 makes a lone surrogate or an out-of-range number inside an event's `metadata` a metadata fault,
// checked after the schema).

import type Koa from 'koa';
import type { ErrorCode } from '../contracts/error-codes.ts';
import { AppError } from '../errors.ts';
import { parseIJson } from './i-json.ts';

export const JSON_BODY_LIMIT_BYTES = 16_384;

export interface JsonBodyOptions {
  limitBytes?: number;
  /** Code for a body that is not JSON. */
  invalidJsonCode?: ErrorCode;
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
  new AppError(400, options.invalidJsonCode ?? 'INVALID_REQUEST', message);

/** The body's text: content type (415), size (413), UTF-8 (400). */
async function readJsonText(ctx: Koa.Context, options: JsonBodyOptions): Promise<string> {
  const limit = options.limitBytes ?? JSON_BODY_LIMIT_BYTES;
  if (!isJsonContentType(ctx.get('Content-Type'))) {
    throw new AppError(415, 'INVALID_CONTENT_TYPE', 'Content-Type must be application/json.');
  }
  const tooLarge = () => new AppError(413, 'PAYLOAD_TOO_LARGE', `The JSON body exceeds ${limit} bytes.`);
  const declared = ctx.get('Content-Length');
  if (declared !== '' && Number(declared) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      ctx.req.resume();
      throw tooLarge();
    }
    chunks.push(buffer);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(Buffer.concat(chunks, size));
  } catch {
    throw invalidJson(options, 'The body is not valid UTF-8.');
  }
}
