// Reading a JSON body with the API's limits, in the contract's order: content type (415), size counted on the raw
// bytes whether or not Content-Length is sent (413), UTF-8, JSON syntax and I-JSON (400; CONTRACT section 10: a
// duplicated member name, a lone surrogate or a number outside the range of a double is not JSON here).

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
  const invalid = (message: string) => new AppError(400, options.invalidJsonCode ?? 'INVALID_REQUEST', message);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(Buffer.concat(chunks, size));
  } catch {
    throw invalid('The body is not valid UTF-8.');
  }
  const parsed = parseIJson(text);
  if (!parsed.ok) throw invalid(parsed.reason);
  return parsed.value;
}
