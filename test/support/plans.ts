// PostgreSQL's query plans for the tests that hold a read to its indexes (test/integration/console/tenant-reads and
// audit-reads): a repository's statement explained (EXPLAIN FORMAT JSON, with ANALYZE when the rows read matter), and
// what the assertions look at: which index each scan of a table uses, and how many rows those scans read.
import type pg from 'pg';

/** A plan node as EXPLAIN FORMAT JSON writes it (the fields the tests read). */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** A repository's statement: SQL with `?` placeholders, and its parameters in order. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** The statement with PostgreSQL's placeholders ($1, $2, ...). */
export function numbered(statement: Statement): string {
  let n = 0;
  return statement.sql.replace(/\?/g, () => `$${++n}`);
}

/** The statement's plan (run, with the rows each node read, when `analyze`). */
export async function explainPlan(client: pg.Client, statement: Statement, analyze = false): Promise<PlanNode> {
  const options = analyze ? 'analyze, format json' : 'format json';
  const result = await client.query(`explain (${options}) ${numbered(statement)}`, statement.params);
  return (result.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
}

/** The node and every node below it. */
export function nodes(root: PlanNode): PlanNode[] {
  return [root, ...(root.Plans ?? []).flatMap(nodes)];
}

/** The scans of a table: `Seq Scan` or the index each uses (a bitmap scan's: its bitmap index scans'). */
export function scansOf(root: PlanNode, table: string): string[] {
  return nodes(root)
    .filter((n) => n['Relation Name'] === table)
    .flatMap((n) => {
      if (n['Node Type'] === 'Bitmap Heap Scan') return nodes(n).flatMap((b) => b['Index Name'] ?? []);
      return [n['Index Name'] ?? n['Node Type']];
    });
}

/** The rows the scans of a table read (returned plus removed by a filter), over all loops (an analyzed plan). */
export function rowsRead(root: PlanNode, table: string): number {
  return nodes(root)
    .filter((n) => n['Relation Name'] === table)
    .reduce(
      (sum, n) => sum + ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1),
      0,
    );
}
