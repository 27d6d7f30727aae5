#!/usr/bin/env bash
# The web console builds from its sources, and the built files the gateway serves (console/dist: not in git, built by
# `npm ci` through the `prepare` script, and by the image's console stage) are those of the current sources: rebuild
# into a temporary folder and compare (Vite's output is deterministic). Fix with `npm run console:build`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
CONSOLE_OUT_DIR="$out" npx vite build --config console/vite.config.ts >/dev/null
[[ -f "$out/index.html" ]] || { echo "the console's build wrote no index.html" >&2; exit 1; }
if git ls-files --error-unmatch console/dist >/dev/null 2>&1; then
  echo "console/dist is in git: it is built (npm ci, npm run console:build), never committed" >&2
  exit 1
fi
if ! diff -r "$out" console/dist >/dev/null 2>&1; then
  echo "console/dist is missing or older than console/src: run npm run console:build" >&2
  diff -rq "$out" console/dist >&2 || true
  exit 1
fi
echo "console/dist is built from the current console/src"
