#!/usr/bin/env bash
# Fuzzes the HTTP API with Schemathesis, a third-party property-based API tester, against a
# live server built from this tree and its own /openapi.yaml: every operation, generated
# valid and invalid requests, every response checked against the documented schema, no 5xx.
#
# Two servers, two runs:
#   keys   — a server with a keys file; requests carry an admin key, and Schemathesis's auth
#            checks send none and bad ones (each must be a documented 401/403);
#   open   — a server without keys (loopback only, every request allowed), the way most
#            people first run it; the auth checks are off there, since no key is needed.
#
# Schemathesis is installed once into a virtualenv under the cache directory (pinned
# version). The run is bounded: FUZZ_API_EXAMPLES cases per operation and phase (default
# 40) and FUZZ_API_MAX_TIME seconds per run (default 150). Exit status: non-zero on any
# failure. Usage: scripts/schemathesis.sh   (or make fuzz-api)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

VERSION=4.32.5
CACHE=${SALIENCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/salience}
VENV=$CACHE/schemathesis-$VERSION
EXAMPLES=${FUZZ_API_EXAMPLES:-40}
MAX_TIME=${FUZZ_API_MAX_TIME:-150}
SEED=${FUZZ_API_SEED:-1}

if [ ! -x "$VENV/bin/schemathesis" ]; then
  echo "fuzz-api: installing schemathesis $VERSION into $VENV"
  mkdir -p "$CACHE"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION"
fi
ST=$VENV/bin/schemathesis

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

go build -o "$WORK/salience" ./cmd/salience

# start NAME ARGS...: starts a server on a free loopback port, waits until it is ready and
# sets BASE to its URL.
start() {
  local name=$1
  shift
  local port addr
  port=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  addr=127.0.0.1:$port
  "$WORK/salience" serve --addr "$addr" --data "$WORK/$name-data" --log-level warn "$@" \
    >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do
    if curl -fs "http://$addr/readyz" >/dev/null 2>&1; then
      BASE=http://$addr
      return
    fi
    sleep 0.1
  done
  echo "fuzz-api: the $name server did not start:" >&2
  cat "$WORK/$name.log" >&2
  exit 1
}

# run NAME ARGS...: runs Schemathesis against BASE, with the logs of the server on failure.
FAILED=0
run() {
  local name=$1
  shift
  echo "== fuzz-api: $name ($EXAMPLES examples per operation, at most ${MAX_TIME}s)"
  # From the scratch directory: Schemathesis keeps its example database in the working
  # directory, which must not be the checkout.
  if ! (cd "$WORK" && "$ST" --config-file "$ROOT/scripts/schemathesis.toml" run "$BASE/openapi.yaml" --url "$BASE" \
      --max-examples "$EXAMPLES" --max-time "$MAX_TIME" --seed "$SEED" --workers 1 \
      --request-timeout 10 --suppress-health-check all --warnings off \
      --output-truncate true "$@"); then
    FAILED=1
    echo "fuzz-api: $name failed; the server's warnings and errors:" >&2
    grep -E 'level=(WARN|ERROR)' "$WORK/$name.log" | tail -20 >&2 || true
  fi
  if grep -q 'level=ERROR' "$WORK/$name.log"; then
    FAILED=1
    echo "fuzz-api: $name: the server logged errors:" >&2
    grep 'level=ERROR' "$WORK/$name.log" | tail -20 >&2
  fi
}

# Checks: everything Schemathesis has, except positive_data_acceptance — it expects every
# schema-valid request to succeed, and some rules are not expressible in OpenAPI 3.0 (recall
# needs query or messages except in startup mode; an id must name a memory that exists).

ADMIN_KEY=fuzz-admin-key-0123456789
cat >"$WORK/keys.json" <<EOF
{"keys":[{"key":"$ADMIN_KEY","name":"fuzz-admin","namespaces":["*"],"admin":true}]}
EOF
start keys --keys "$WORK/keys.json"
run keys --checks all --exclude-checks positive_data_acceptance --header "Authorization: Bearer $ADMIN_KEY"

start open
# Without keys the document's bearer requirement does not apply: the auth checks, and the
# negative check (which counts a request without the header as invalid), are the keys run's.
run open --checks all --exclude-checks positive_data_acceptance,negative_data_rejection,ignored_auth,missing_required_header

if [ "$FAILED" != 0 ]; then
  echo "fuzz-api: FAILED"
  exit 1
fi
echo "fuzz-api: ok"
