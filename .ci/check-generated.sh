#!/usr/bin/env bash
# Fails when the TypeScript generated from proto/ is stale: regenerates into a temporary copy and compares.
set -euo pipefail
cd "$(dirname "$0")/.."
gen=services/runtime/src/contracts/gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r proto "$tmp/proto"
mkdir -p "$tmp/node_modules/.bin"
ln -s "$PWD/node_modules/.bin/protoc-gen-es" "$tmp/node_modules/.bin/protoc-gen-es"
(cd "$tmp/proto" && "$OLDPWD/node_modules/.bin/buf" generate)
if ! diff -r "$tmp/services/runtime/src/contracts/gen" "$gen" >/dev/null; then
  echo "Generated protobuf code is stale: run 'npm run proto:generate' and commit the result." >&2
  diff -r "$tmp/services/runtime/src/contracts/gen" "$gen" | head -20 >&2
  exit 1
fi
echo "generated protobuf code is up to date"
