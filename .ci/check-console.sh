#!/usr/bin/env bash
# The web console's built files (console/dist, committed and served by the gateway) match its sources: rebuild into
# a temporary folder and compare. Fix with `npm run console:build` and commit console/dist.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CONSOLE_OUT_DIR="$out" npx vite build --config console/vite.config.ts >/dev/null
if ! diff -r "$out" console/dist >/dev/null; then
  echo "console/dist is out of date with console/src: run npm run console:build and commit console/dist" >&2
  diff -rq "$out" console/dist >&2 || true
  exit 1
fi
echo "console/dist is up to date"
