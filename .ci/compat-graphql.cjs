// graphql-inspector's `diff --onComplete` handler for .ci/check-compat.sh: instead of failing on any breaking change
// (the CLI's default), it writes the breaking and dangerous changes to the file named by COMPAT_GRAPHQL_OUT, and
// .ci/compat-verdict.ts decides which of them CHANGELOG.md allows. The CLI prints every change itself before this runs;
// with no change at all it does not call this handler, and the missing file means none.
const { writeFileSync } = require('node:fs');

const pick = (change) => ({ type: change.type, message: change.message, path: change.path });

module.exports = ({ breakingChanges, dangerousChanges }) => {
  const out = process.env.COMPAT_GRAPHQL_OUT;
  if (!out) throw new Error('compat-graphql.cjs: COMPAT_GRAPHQL_OUT is not set');
  writeFileSync(
    out,
    `${JSON.stringify({ breaking: breakingChanges.map(pick), dangerous: dangerousChanges.map(pick) }, null, 2)}\n`,
  );
};
