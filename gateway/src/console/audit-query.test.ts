// The audit query's parsing at the edge (console/service.ts, rest/console.ts): RFC 3339 bounds kept to the
// microsecond in any offset, and the records' rules and code for everything malformed.
import { parseAuditQuery } from '../rest/console.ts';
import { epochMicros } from './service.ts';

const ORG = '7d1f2a0e-8c6b-4a55-9a51-2d6f7f1e0c11';

describe('epochMicros', () => {
  test.each([
    ['1970-01-01T00:00:00Z', 0n],
    ['1970-01-01T00:00:00.000001Z', 1n],
    ['1970-01-01T00:00:00.1234567Z', 123_456n],
    ['1970-01-01T01:00:00+01:00', 0n],
    ['1969-12-31T23:59:59.5Z', -500_000n],
    ['2026-12-07T05:40:00.123456Z', BigInt(Date.parse('2026-12-07T05:40:00.123Z')) * 1000n + 456n],
  ])('%s', (text, micros) => {
    expect(epochMicros(text)).toBe(micros);
  });
});

describe('parseAuditQuery', () => {
  test('the filters, the window in microseconds and the default limit', () => {
    expect(
      parseAuditQuery(
        `organizationId=${ORG}&action=issueKey&actor=dev%7C1&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00.5Z`,
      ),
    ).toEqual({
      organizationId: ORG,
      action: 'issueKey',
      actor: 'dev|1',
      fromMicros: BigInt(Date.parse('2026-01-01T00:00:00Z')) * 1000n,
      toMicros: BigInt(Date.parse('2026-01-02T00:00:00Z')) * 1000n + 500_000n,
      limit: 50,
    });
  });

  test.each([
    ['', 'organizationId missing'],
    [`organizationId=${ORG}&organizationId=${ORG}`, 'repeated'],
    [`organizationId=${ORG}&kind=events`, 'unknown parameter'],
    [`organizationId=${ORG}&limit=0`, 'limit below 1'],
    [`organizationId=${ORG}&limit=101`, 'limit above 100'],
    [`organizationId=${ORG}&limit=01`, 'limit not canonical'],
    [`organizationId=${ORG}&from=2026-01-01`, 'a date without a time'],
    [`organizationId=${ORG}&from=2026-01-02T00:00:00Z&to=2026-01-02T00:00:00Z`, 'to not after from'],
    [`organizationId=${ORG}&actor=`, 'empty actor'],
    ['organizationId=nope', 'organizationId not a uuid'],
  ])('%s: 400 INVALID_RECORD_QUERY (%s)', (query) => {
    expect(() => parseAuditQuery(query)).toThrow(expect.objectContaining({ code: 'INVALID_RECORD_QUERY' }));
  });
});
