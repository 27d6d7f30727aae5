// The order of the decision checks is written once in TypeScript (DECISION_CHECK_ORDER, the contract's order) and
// twice in SQL, where the database needs it: the CASE of ledger.decision_reason (which decides) and simulate_rule's
// reason array (which counts). These tests keep the three the same list.
import { readFileSync } from 'node:fs';
import { DECISION_CHECK_ORDER, DECISION_REASONS } from '#runtime/contracts/vocabulary.ts';

const sqlFile = (name: string) => readFileSync(new URL(`../sql/${name}`, import.meta.url), 'utf8');

/** The reasons a PL/pgSQL or SQL text names, in the order they appear (comments removed). */
function reasonsIn(text: string): string[] {
  const code = text.replace(/--.*$/gm, '');
  const known = new Set<string>(DECISION_REASONS);
  return [...code.matchAll(/'([a-z_]+)'/g)].map(([, word]) => word!).filter((word) => known.has(word));
}

describe('the order of the decision checks', () => {
  it('names every rejection reason once', () => {
    expect([...DECISION_CHECK_ORDER].sort()).toEqual([...DECISION_REASONS].sort());
  });

  it('is the order of the CASE in ledger.decision_reason (the project reasons cannot follow a passed game check)', () => {
    const body = sqlFile('decision_reason.sql').split('$fn$')[1]!;
    const projectReasons = new Set(['project_budget_exhausted', 'project_payout_ceiling']);
    expect(reasonsIn(body)).toEqual(DECISION_CHECK_ORDER.filter((reason) => !projectReasons.has(reason)));
  });

  it("is simulate_rule's reason array, by which it counts", () => {
    const body = sqlFile('simulate_rule.sql').split('$fn$')[1]!;
    const array = /c_reasons constant text\[\] := array\[([^\]]*)\]/.exec(body)?.[1];
    expect(array).toBeDefined();
    expect(reasonsIn(array!)).toEqual([...DECISION_CHECK_ORDER]);
    expect(body).toContain(`array_fill(0, array[${DECISION_CHECK_ORDER.length}])`);
  });
});
