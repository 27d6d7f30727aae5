// Usage: node .ci/print-api.ts ROOT OUT_DIR — writes the API of the source tree at ROOT (this repository, or an
// earlier release of it unpacked elsewhere) as OUT_DIR/openapi.json (what GET /openapi.json serves) and
// OUT_DIR/schema.graphql (the GraphQL console's schema, printed from the executable schema), without starting a
// server. The modules are ROOT's own, and so is the `graphql` package that prints the schema, so that a release is
// described by its own code. Used by .ci/check-compat.sh.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [rootArgument, outArgument] = process.argv.slice(2);
if (!rootArgument || !outArgument) {
  console.error('usage: node .ci/print-api.ts ROOT OUT_DIR');
  process.exit(2);
}
const root = resolve(rootArgument);
const out = resolve(outArgument);
const load = (path: string) => import(pathToFileURL(join(root, path)).href);

const { buildOpenApiDocument } = await load('gateway/src/openapi.ts');
const { openApiFragments } = await load('gateway/src/program.ts');
const { createSchema } = await load('gateway/src/graphql/server.ts');
const { printSchema } = await import(pathToFileURL(createRequire(join(root, 'package.json')).resolve('graphql')).href);

mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'openapi.json'), `${JSON.stringify(buildOpenApiDocument(openApiFragments), null, 2)}\n`);
writeFileSync(join(out, 'schema.graphql'), `${printSchema(createSchema())}\n`);
console.log(`${root}: ${join(out, 'openapi.json')}, ${join(out, 'schema.graphql')}`);
// Importing the gateway's modules may leave timers behind (metrics, pools); nothing more is to be done.
process.exit(0);
