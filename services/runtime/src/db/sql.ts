// Small SQL helpers shared by the repositories.

/**
 * A timestamptz column as RFC 3339 UTC text with milliseconds (`2026-11-22T02:34:50.040Z`), the API's format.
 * Raw queries return timestamps as driver-specific strings; formatting in SQL keeps one spelling everywhere.
 */
export function isoSql(column: string, alias = column.split('.').pop() as string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${alias}`;
}

/** Same, with microseconds: exact enough to be a keyset-pagination key. */
export function isoMicrosSql(column: string, alias: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ${alias}`;
}
