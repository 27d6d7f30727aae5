#!/usr/bin/env bash
# Fails when clients/typescript/openapi.d.ts is not what openapi-typescript (the version pinned below, through npx, in
# npm's cache: it wants TypeScript 5 beside it) writes from the current OpenAPI document (.ci/print-api.ts: what
# GET /openapi.json serves, without a server). Regenerate with the same commands (clients/typescript/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OPENAPI_TYPESCRIPT_VERSION=7.13.0
generated=clients/typescript/openapi.d.ts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node .ci/print-api.ts . "$tmp/api" >/dev/null
npx -y "openapi-typescript@$OPENAPI_TYPESCRIPT_VERSION" "$tmp/api/openapi.json" -o "$tmp/openapi.d.ts" >/dev/null 2>&1
if ! diff -q "$tmp/openapi.d.ts" "$generated" >/dev/null; then
  echo "$generated is stale: regenerate it as clients/typescript/README.md says and commit it." >&2
  diff "$tmp/openapi.d.ts" "$generated" | head -20 >&2
  exit 1
fi
echo "$generated is generated from the current OpenAPI document"
