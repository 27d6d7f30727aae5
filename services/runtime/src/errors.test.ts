import { describe, expect, it } from '@jest/globals';
import { ERROR_CODES, type ErrorCode } from './contracts/error-codes.ts';
import { AppError, DependencyUnavailableError, relabelUnavailable } from './errors.ts';
import { decodeError, encodeError } from './transport/codec.ts';

describe('AppError takes its status from the error table', () => {
  it('looks up the one status of a single-status code', () => {
    for (const [code, entry] of Object.entries(ERROR_CODES) as [ErrorCode, { statuses: readonly number[] }][]) {
      if (entry.statuses.length !== 1) continue;
      expect(AppError.withStatus(entry.statuses[0] as number, code, 'm').status).toBe(entry.statuses[0]);
    }
    expect(new AppError('not_found', 'gone').status).toBe(404);
    expect(new AppError('retry_later', 'later').status).toBe(503);
  });

  it('names a status only for codes the table lists with several, and only a listed one', () => {
    const several = Object.entries(ERROR_CODES)
      .filter(([, entry]) => entry.statuses.length > 1)
      .map(([code]) => code)
      .sort();
    expect(several).toEqual(['TOO_MANY_REQUESTS', 'invalid_link', 'unlimited_funding']);
    expect(AppError.withStatus(409, 'invalid_link', 'used').status).toBe(409);
    expect(AppError.withStatus(403, 'unlimited_funding', 'no').status).toBe(403);
    expect(() => AppError.withStatus(500, 'invalid_link', 'x')).toThrow(/invalid_link/);
    expect(() => AppError.withStatus(400, 'not_found', 'x')).toThrow(/not_found/);
    // A several-status code without a status is refused at run time too (the types refuse it at compile time).
    expect(() => new AppError('invalid_link' as 'not_found', 'x')).toThrow(/invalid_link/);
  });

  it('relabels an unavailable dependency only with a 503 code', () => {
    const relabelled = relabelUnavailable(new DependencyUnavailableError('ledger', 'timeout'), 'retry_later');
    expect(relabelled).toBeInstanceOf(AppError);
    expect((relabelled as AppError).status).toBe(503);
    expect(() => relabelUnavailable(new DependencyUnavailableError('ledger', 'timeout'), 'not_found')).toThrow();
  });

  it('keeps a reply’s listed status over NATS and refuses an unlisted one', () => {
    const used = decodeError(encodeError(AppError.withStatus(409, 'invalid_link', 'used', { hint: 1 })));
    expect([used.status, used.code, used.message, used.extra]).toEqual([409, 'invalid_link', 'used', { hint: 1 }]);
    const forged = encodeError(new AppError('forbidden', 'x'));
    const decoded = decodeError(forged);
    expect(decoded.status).toBe(403);
    // The same bytes with a status the table does not list for the code: reported as an internal error.
    const wrong = decodeError(encodeError(Object.assign(new AppError('forbidden', 'x'), { status: 418 })));
    expect([wrong.status, wrong.code]).toEqual([500, 'internal_error']);
  });
});
