import { pino } from 'pino';
import { AppError } from '#runtime/errors.ts';
import { translateStoreError } from './endpoints.ts';

const logger = pino({ level: 'silent' });

function translated(error: unknown): unknown {
  try {
    translateStoreError(error, logger);
  } catch (thrown) {
    return thrown;
  }
  throw new Error('translateStoreError returned');
}

describe('translateStoreError', () => {
  it('passes API errors through unchanged', () => {
    const error = new AppError('not_found', 'No such object.');
    expect(translated(error)).toBe(error);
  });

  it('answers 503 DEVELOPER_ACCESS_UNAVAILABLE when the database cannot serve', () => {
    for (const code of ['08006', '08001', '57P01', '53300', '40001', '40P01', 'ECONNREFUSED', 'ECONNRESET']) {
      const error = translated(Object.assign(new Error('down'), { code }));
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ status: 503, code: 'DEVELOPER_ACCESS_UNAVAILABLE' });
    }
  });

  it("answers 400 invalid_action when a column's CHECK refuses a value the action supplied", () => {
    for (const constraint of ['organizations_name_check', 'games_platform_check', 'members_role_check']) {
      expect(translated(Object.assign(new Error('check'), { code: '23514', constraint }))).toMatchObject({
        status: 400,
        code: 'invalid_action',
      });
    }
  });

  it('answers 503, not a 400 blaming the client, when a named invariant refuses what the ledger decided', () => {
    // members_owner_joined refused an owner row written by a ledger of another release: a server-side fault.
    for (const constraint of ['members_owner_joined', 'decision_shape', 'game_spent_within_budget', '']) {
      expect(translated(Object.assign(new Error('check'), { code: '23514', constraint }))).toMatchObject({
        status: 503,
        code: 'DEVELOPER_ACCESS_UNAVAILABLE',
      });
    }
  });

  it("answers 503 for a connection that broke without a code (the driver's own error)", () => {
    expect(translated(new Error('Connection terminated unexpectedly'))).toMatchObject({
      status: 503,
      code: 'DEVELOPER_ACCESS_UNAVAILABLE',
    });
  });

  it('leaves anything else to the generic 500', () => {
    const bug = new TypeError('x is undefined');
    expect(translated(bug)).toBe(bug);
    const syntax = Object.assign(new Error('syntax error'), { code: '42601' });
    expect(translated(syntax)).toBe(syntax);
  });
});
