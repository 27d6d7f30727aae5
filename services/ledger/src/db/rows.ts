// Row shapes read at the boundary: what a statement answers is checked field by field as it is read, so that a
// malformed row (a null where a value belongs, a number where text belongs) fails loudly with the column's name
// instead of becoming NaN or "undefined" further on. The one place that says what the driver answers for each kind of
// column; the repositories read their rows through it.
import type { EntityManager } from '@mikro-orm/postgresql';

/** A result row as the driver answers it: its columns by name. */
export type Row = Readonly<Record<string, unknown>>;

/** How one field of a row shape is read from a row. */
export type Field<V> = (row: Row) => V;

/** A row (or a tuple a SQL function answered) that does not have the shape its reader expects: a bug, never input. */
export class RowShapeError extends Error {
  constructor(column: string, expected: string, value: unknown) {
    super(`column ${column}: expected ${expected}, got ${value === null ? 'null' : typeof value}`);
    this.name = 'RowShapeError';
  }
}

/** A text value (uuid, text, an instant formatted in SQL): a string. */
export function textValue<V extends string = string>(value: unknown, column: string): V {
  if (typeof value !== 'string') throw new RowShapeError(column, 'text', value);
  return value as V;
}

/** A nullable text value: undefined for null. */
export function optionalTextValue(value: unknown, column: string): string | undefined {
  return value === null || value === undefined ? undefined : textValue(value, column);
}

/** Credits (int8 or numeric as text, or a JSON number): a bigint. */
export function creditsValue(value: unknown, column: string): bigint {
  if (typeof value === 'bigint') return value;
  if ((typeof value === 'string' && /^-?\d+$/.test(value)) || (typeof value === 'number' && Number.isInteger(value))) {
    return BigInt(value);
  }
  throw new RowShapeError(column, 'an integer', value);
}

/** A count, a sum or an instant in ms: a finite JavaScript number (int8 arrives as text). */
export function numericValue(value: unknown, column: string): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new RowShapeError(column, 'a number', value);
  return number;
}

/** A boolean value. */
export function flagValue(value: unknown, column: string): boolean {
  if (typeof value !== 'boolean') throw new RowShapeError(column, 'a boolean', value);
  return value;
}

// The fields' readers, one per kind of column.
export const text =
  <V extends string = string>(column: string): Field<V> =>
  (row) =>
    textValue<V>(row[column], column);
export const optionalText =
  (column: string): Field<string | undefined> =>
  (row) =>
    optionalTextValue(row[column], column);
export const flag =
  (column: string): Field<boolean> =>
  (row) =>
    flagValue(row[column], column);
export const credits =
  (column: string): Field<bigint> =>
  (row) =>
    creditsValue(row[column], column);
export const numeric =
  (column: string): Field<number> =>
  (row) =>
    numericValue(row[column], column);

/** One row shape's reader: every field of T read by its own Field (optional fields too). */
export function rowReader<T>(fields: { [K in keyof T]-?: Field<T[K]> }): Field<T> {
  const entries = Object.entries(fields) as Array<[string, Field<unknown>]>;
  return (row) => {
    const value: Record<string, unknown> = {};
    for (const [name, read] of entries) value[name] = read(row);
    return value as T;
  };
}

/** The rows of a statement. */
export function queryRows(em: EntityManager, sql: string, params: unknown[] = []): Promise<Row[]> {
  return em.execute<Row[]>(sql, params);
}
