import { DeadlockException, DriverException } from '@mikro-orm/core';
import { NoSuitableServerError } from './failover.ts';
import { CONTENTION_ATTEMPTS, classifyDatabaseFailure, retryOnContention, sqlStateOf } from './failures.ts';

const withCode = (code: string, message = 'failure') => Object.assign(new Error(message), { code });

describe('classifyDatabaseFailure', () => {
  it('contention: serialization failures and deadlocks, also wrapped by the ORM', () => {
    expect(classifyDatabaseFailure(withCode('40001'))).toBe('contention');
    expect(classifyDatabaseFailure(withCode('40P01'))).toBe('contention');
    expect(classifyDatabaseFailure(new DeadlockException(withCode('40P01')))).toBe('contention');
  });

  it('unavailable: refused before or by the server, nothing done', () => {
    for (const code of ['53300', '53100', '57014', '57P03', '55P03', '55000', '28P01', '3D000', 'ECONNREFUSED']) {
      expect([code, classifyDatabaseFailure(withCode(code))]).toEqual([code, 'unavailable']);
    }
    expect(classifyDatabaseFailure(new Error('timeout exceeded when trying to connect'))).toBe('unavailable');
  });

  it('unavailable: a write on a read-only server (25006, a demoted primary), also wrapped; no server suits', () => {
    expect(classifyDatabaseFailure(withCode('25006'))).toBe('unavailable');
    expect(classifyDatabaseFailure(new DriverException(withCode('25006')))).toBe('unavailable');
    const none = new NoSuitableServerError('no database server suits target_session_attrs=read-write');
    expect(classifyDatabaseFailure(none)).toBe('unavailable');
    expect(classifyDatabaseFailure(new DriverException(none))).toBe('unavailable');
  });

  it('connection_lost: the connection broke, a commit may have happened', () => {
    for (const code of ['08006', '08003', '57P01', '57P02', '58030', '40003', 'ECONNRESET', 'EPIPE']) {
      expect([code, classifyDatabaseFailure(withCode(code))]).toEqual([code, 'connection_lost']);
    }
    expect(classifyDatabaseFailure(new Error('Connection terminated unexpectedly'))).toBe('connection_lost');
    expect(classifyDatabaseFailure(new DriverException(new Error('Connection terminated unexpectedly')))).toBe(
      'connection_lost',
    );
    expect(classifyDatabaseFailure(new Error('wrapped', { cause: withCode('57P01') }))).toBe('connection_lost');
  });

  it('anything else is not a database failure (a bug or an answer of a healthy database)', () => {
    for (const error of [withCode('23505'), withCode('23514'), withCode('42601'), new TypeError('x'), 'text', null]) {
      expect(classifyDatabaseFailure(error)).toBeUndefined();
    }
  });
});

describe('sqlStateOf', () => {
  it("the server's SQLSTATE, also wrapped; not a socket errno", () => {
    expect(sqlStateOf(withCode('26000'))).toBe('26000');
    expect(sqlStateOf(new DriverException(withCode('42P05')))).toBe('42P05');
    expect(sqlStateOf(new Error('wrapped', { cause: withCode('25006') }))).toBe('25006');
    for (const error of [withCode('EPIPE'), withCode('ECONNRESET'), new TypeError('x'), null, 'text']) {
      expect(sqlStateOf(error)).toBeUndefined();
    }
  });
});

describe('retryOnContention', () => {
  it('runs the work again after contention, up to the bound, then throws the last failure', async () => {
    let calls = 0;
    await expect(
      retryOnContention(async () => {
        calls++;
        if (calls < CONTENTION_ATTEMPTS) throw withCode('40P01');
        return 'done';
      }),
    ).resolves.toBe('done');
    expect(calls).toBe(CONTENTION_ATTEMPTS);

    calls = 0;
    const deadlock = withCode('40P01');
    await expect(
      retryOnContention(async () => {
        calls++;
        throw deadlock;
      }),
    ).rejects.toBe(deadlock);
    expect(calls).toBe(CONTENTION_ATTEMPTS);
  });

  it('tells its observer of every contention failure: retried, then the one it gave up on', async () => {
    const seen: Array<[string, number, string]> = [];
    const observe = (sqlstate: string, attempt: number, outcome: string) => seen.push([sqlstate, attempt, outcome]);
    let calls = 0;
    await expect(
      retryOnContention(
        async () => {
          calls++;
          // The ORM wraps the driver's error; the SQLSTATE is found on its cause.
          if (calls === 1) throw new DeadlockException(withCode('40P01'));
          if (calls === 2) throw withCode('40001');
          return 'done';
        },
        CONTENTION_ATTEMPTS,
        observe,
      ),
    ).resolves.toBe('done');
    expect(seen).toEqual([
      ['40P01', 1, 'retried'],
      ['40001', 2, 'retried'],
    ]);

    seen.length = 0;
    await expect(
      retryOnContention(
        async () => {
          throw withCode('40P01');
        },
        2,
        observe,
      ),
    ).rejects.toMatchObject({ code: '40P01' });
    expect(seen).toEqual([
      ['40P01', 1, 'retried'],
      ['40P01', 2, 'gave_up'],
    ]);

    seen.length = 0;
    await expect(retryOnContention(async () => Promise.reject(withCode('08006')), 3, observe)).rejects.toThrow();
    expect(seen).toEqual([]);
  });

  it('does not retry anything else', async () => {
    let calls = 0;
    const down = withCode('08006');
    await expect(
      retryOnContention(async () => {
        calls++;
        throw down;
      }),
    ).rejects.toBe(down);
    expect(calls).toBe(1);
  });
});
