#!/usr/bin/env bash
# Schemathesis against the running all-in-one process (`npm start`: embedded PostgreSQL and the in-process transport,
# a temporary DATA_DIR, a random ADMIN_TOKEN, GRAPHQL_INTROSPECTION=true): every check, three runs. The served
# /openapi.json twice, once without credentials and once with a developer session of the local development identity
# provider; then /graphql in schemathesis's GraphQL mode (the schema read by introspection) with that session, after
# giving the developer an organization, a project, a game, a rule, a key and a member, whose ids the UUID scalar's
# strategy draws from as well as random UUIDs (so that mutations reach the ledger's rules, not only not_found).
# Exits non-zero on any failure. Called by .ci/run as its own step; runs locally the same way:
# bash .ci/schemathesis.sh
# Settings: .ci/schemathesis.toml; the custom scalars' strategies and the documented exemptions:
# .ci/schemathesis_hooks.py.
#
# Environment:
#   SCHEMATHESIS_VENV       the virtual environment (made when missing)        default .venv-schemathesis
#   SCHEMATHESIS_MAX_TIME   time budget of each of the two REST runs, in s     default 70
#   SCHEMATHESIS_GRAPHQL_MAX_TIME  time budget of the GraphQL run, in s        default 60
#   SCHEMATHESIS_SEED       seed of the data generation                       default random (printed)
#   SCHEMATHESIS_REPORT     folder for JUnit reports and the server's log     default a temporary folder
#   SCHEMATHESIS_START_TIMEOUT  seconds to wait for the service to be ready  default 240
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
venv=${SCHEMATHESIS_VENV:-.venv-schemathesis}
max_time=${SCHEMATHESIS_MAX_TIME:-70}
graphql_max_time=${SCHEMATHESIS_GRAPHQL_MAX_TIME:-60}
seed=${SCHEMATHESIS_SEED:-$(python3 -c 'import secrets; print(secrets.randbelow(2**31))')}
node=node_modules/.bin/node
[ -x "$node" ] || { echo "schemathesis.sh: run npm ci first (Node 24 comes from node_modules)" >&2; exit 2; }

if [ ! -x "$venv/bin/schemathesis" ] || [ "$("$venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  echo "making $venv with schemathesis $SCHEMATHESIS_VERSION"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi
"$venv/bin/schemathesis" --version

work=$(mktemp -d)
report=${SCHEMATHESIS_REPORT:-$work/report}
mkdir -p "$report"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
admin_token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
base="http://127.0.0.1:$port"
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work/data"
}
trap cleanup EXIT

# The all-in-one process: `npm start` without npm in between, so that $! is the server itself. Introspection on: the
# GraphQL run reads the schema that way (CONTRACT section 9: off unless GRAPHQL_INTROSPECTION=true). The developer's
# limits are raised: one session sends every generated request as fast as they are answered, and a 429 for a valid
# request (documented in /openapi.json, tested in test/integration/console/developer-limits.test.ts) would say
# nothing about the request's shape.
PORT=$port DATA_DIR="$work/data" ADMIN_TOKEN=$admin_token LOG_LEVEL=warn GRAPHQL_INTROSPECTION=true \
  DEVELOPER_RATE_PER_SECOND=100000 DEVELOPER_BURST=100000 DEVELOPER_IN_FLIGHT_MAX=1000 \
  SIMULATE_RULE_PER_DEVELOPER_MAX=100 SIMULATE_RULE_IN_FLIGHT_MAX=100 \
  "$node" services/all-in-one/src/main.ts >"$report/server.log" 2>&1 &
server_pid=$!
# Start-up takes a few seconds on an idle machine and a minute or more on a busy one (PGlite's first initdb).
ready_deadline=$((SECONDS + ${SCHEMATHESIS_START_TIMEOUT:-240}))
until curl -fsS "$base/readyz" >/dev/null 2>&1; do
  if ! kill -0 "$server_pid" 2>/dev/null || [ "$SECONDS" -ge "$ready_deadline" ]; then
    cat "$report/server.log" >&2
    echo "the service did not become ready at $base" >&2
    exit 1
  fi
  sleep 0.5
done

# A developer: invited through the operator API, with a session of the development identity provider.
email="schemathesis-$seed@example.com"
curl -fsS -X POST "$base/api/admin/v1/invitations" -H "Authorization: Bearer $admin_token" \
  -H 'Content-Type: application/json' --data "{\"email\":\"$email\"}" >/dev/null
dev_token=$(DATA_DIR="$work/data" "$node" services/identity-admission/src/cli/dev-token.ts --email "$email")
status=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $dev_token" "$base/api/developer/v1/access")
[ "$status" = 200 ] || { echo "the developer session is not admitted ($status)" >&2; exit 1; }

# Schemathesis closes each run with a pytest-style line ("=== 2 warnings in 70.02s ==="); CI's log reader would take
# it for a pytest run that executed no test, so the sed below rewrites such lines to "schemathesis: 2 warnings in 70.02s"
# (pipefail keeps schemathesis's exit status).
run() {
  local name=$1 location=$2 time=$3
  shift 3
  echo
  echo "--- schemathesis: $name (seed $seed, at most ${time}s)"
  PYTHONPATH=.ci "$venv/bin/schemathesis" --config-file .ci/schemathesis.toml run "$location" \
    --checks all \
    --max-time "$time" \
    --max-examples 50 \
    --seed "$seed" \
    --workers 1 \
    --request-timeout 10 \
    --generation-database none \
    --suppress-health-check too_slow \
    --report junit --report-junit-path "$report/$name.xml" \
    --no-color \
    "$@" 2>&1 | sed -E 's/^=+ (.+) =+$/schemathesis: \1/'
}

# The GraphQL run's world: objects of the developer's own, made through the GraphQL mutations themselves; their ids
# go to the UUID scalar's strategy (SCHEMATHESIS_GRAPHQL_IDS, read by the hooks module).
seed_graphql() {
  python3 - "$base/graphql" "$dev_token" "$work/graphql-ids.json" <<'PY'
import json, sys, urllib.request

url, token, out = sys.argv[1:]


def mutate(field, args):
    query = "mutation($input: %sInput!) { %s(input: $input) { id } }" % (field[0].upper() + field[1:], field)
    request = urllib.request.Request(
        url,
        json.dumps({"query": query, "variables": {"input": args}}).encode(),
        {"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.load(response)
    if body.get("errors") or not (body.get("data") or {}).get(field):
        sys.exit(f"seeding the GraphQL run: {field} failed: {json.dumps(body)}")
    return body["data"][field]["id"]


organization = mutate("createOrganization", {"name": "schemathesis"})
mutate("fundOrganization", {"organizationId": organization, "amountCredits": 10**9})
project = mutate("createProject", {"organizationId": organization, "name": "schemathesis", "maxPayoutCredits": 10**9})
mutate("allocateProject", {"projectId": project, "amountCredits": 10**8})
game = mutate(
    "createGame",
    {"projectId": project, "name": "schemathesis", "platform": "web", "maxPayoutCredits": 10**8,
     "dailyPlayerCapCredits": 10**6},
)
mutate("allocateGame", {"gameId": game, "amountCredits": 10**7})
rule = mutate("createRule", {"gameId": game, "eventType": "level.completed", "rewardCredits": 10})
key = mutate("issueKey", {"gameId": game, "kind": "secret", "name": "schemathesis"})
member = mutate("addMember", {"organizationId": organization, "identityUserId": "schemathesis-member", "role": "viewer"})
with open(out, "w") as file:
    json.dump([organization, project, game, rule, key, member], file)
PY
}

# The served document is a valid OpenAPI 3.1 document (openapi-spec-validator), and an integrator's path works: a
# client generated by openapi-python-client from it posts an event and a batch and reads a native route's error.
OPENAPI_PYTHON_CLIENT_VERSION=0.29.1
OPENAPI_SPEC_VALIDATOR_VERSION=0.9.0
if [ "$("$venv/bin/openapi-python-client" --version 2>/dev/null)" != "openapi-python-client version: $OPENAPI_PYTHON_CLIENT_VERSION" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION"
fi
if [ "$("$venv/bin/pip" show openapi-spec-validator 2>/dev/null | sed -n 's/^Version: //p')" != "$OPENAPI_SPEC_VALIDATOR_VERSION" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION"
fi
curl -fsS "$base/openapi.json" -o "$work/openapi.json"
"$venv/bin/openapi-spec-validator" "$work/openapi.json"
"$venv/bin/python" .ci/generated_client.py "$base" "$dev_token" "$work"

failed=0
run unauthenticated "$base/openapi.json" "$max_time" || failed=1
run developer "$base/openapi.json" "$max_time" --header "Authorization: Bearer $dev_token" || failed=1
if seed_graphql; then
  SCHEMATHESIS_GRAPHQL_IDS="$work/graphql-ids.json" \
    run graphql "$base/graphql" "$graphql_max_time" --header "Authorization: Bearer $dev_token" || failed=1
else
  failed=1
fi
if [ "$failed" != 0 ]; then
  echo "schemathesis found failures (reports and the server's log: $report)" >&2
  exit 1
fi
echo "schemathesis: no failures"
