import { describe, expect, it } from '@jest/globals';
import { credits, flag, numeric, optionalText, RowShapeError, rowReader, text } from './rows.ts';

const read = rowReader<{ id: string; name: string | undefined; on: boolean; spent: bigint; count: number }>({
  id: text('id'),
  name: optionalText('name'),
  on: flag('on'),
  spent: credits('spent'),
  count: numeric('count'),
});

describe('row shapes read at the boundary', () => {
  it('reads what the driver answers for each kind of column', () => {
    expect(read({ id: 'a', name: null, on: true, spent: '1000000000000', count: '3' })).toEqual({
      id: 'a',
      name: undefined,
      on: true,
      spent: 1_000_000_000_000n,
      count: 3,
    });
    expect(read({ id: 'a', name: 'n', on: false, spent: 7, count: 0 })).toMatchObject({ name: 'n', spent: 7n });
  });

  it('refuses a malformed row with the column named, never NaN or "undefined"', () => {
    const ok = { id: 'a', name: null, on: true, spent: '1', count: 1 };
    expect(() => read({ ...ok, id: null })).toThrow(new RowShapeError('id', 'text', null));
    expect(() => read({ ...ok, name: 5 })).toThrow(/column name: expected text, got number/);
    expect(() => read({ ...ok, on: 'true' })).toThrow(/column on: expected a boolean/);
    expect(() => read({ ...ok, spent: '1.5' })).toThrow(/column spent: expected an integer/);
    expect(() => read({ ...ok, spent: null })).toThrow(/column spent/);
    expect(() => read({ ...ok, count: 'x' })).toThrow(/column count: expected a number/);
    expect(() => read({ ...ok, count: null })).toThrow(/column count/);
  });
});
