#!/usr/bin/env bash
# zbctl, Zeebe's Go CLI (8.4.0, from the community npm package zbctl@8.4.1), against a real
# `beeline broker`: topology and message publishing, the errors a user sees, clean shutdown.
#
#   compat/zbctl/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/zbctl/run.sh
#
# zbctl is installed once into $BEELINE_COMPAT_CACHE (default ~/.cache/beeline-compat).
set -euo pipefail
cd "$(dirname "$0")/../.."

cache="${BEELINE_COMPAT_CACHE:-$HOME/.cache/beeline-compat}"
zbctl="$cache/zbctl/node_modules/zbctl/bin/zbctl-cli.linux"
if [ ! -x "$zbctl" ]; then
  echo "==> installing zbctl 8.4 (npm zbctl@8.4.1) into $cache/zbctl"
  npm install --prefix "$cache/zbctl" --no-audit --no-fund zbctl@8.4.1 >/dev/null
fi

bin="${BEELINE_BIN:-}"
if [ -z "$bin" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/beeline-target}"
  echo "==> building beeline (release)"
  cargo build --release -p beeline
  bin="$CARGO_TARGET_DIR/release/beeline"
fi

grpc_port="${BEELINE_COMPAT_GRPC_PORT:-26599}"
monitoring_port="${BEELINE_COMPAT_MONITORING_PORT:-9699}"
rest_port="${BEELINE_COMPAT_REST_PORT:-8099}"
data="$(mktemp -d)"
log="$data/beeline.log"
"$bin" broker --data-dir "$data/data" --partitions 3 --host 127.0.0.1 \
  --grpc-port "$grpc_port" --monitoring-port "$monitoring_port" --rest-port "$rest_port" \
  >"$log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$monitoring_port/ready" >/dev/null; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then echo "beeline exited:"; cat "$log"; exit 1; fi
  sleep 0.5
done

zb() { "$zbctl" --insecure --address "127.0.0.1:$grpc_port" --requestTimeout 10s "$@" 2>&1; }
failures=0
# expect <description> <substring> <zbctl args...>: the output must contain the substring.
expect() {
  local what="$1" want="$2"
  shift 2
  local out
  out="$(zb "$@" || true)"
  if grep -qF -- "$want" <<<"$out"; then
    echo "ok    $what"
  else
    echo "FAIL  $what: expected '$want' in:"
    sed 's/^/        /' <<<"$out"
    failures=$((failures + 1))
  fi
}

expect "status: cluster size" "Cluster size: 1" status
expect "status: partitions" "Partitions count: 3" status
expect "status: replication" "Replication factor: 1" status
expect "status: partition 3 led and healthy" "Partition 3 : Leader, Healthy" status
expect "publish a message" '"key":' publish message paid --correlationKey order-1 \
  --messageId m-1 --variables '{"amount": 5}' --ttl 1m
expect "publish: duplicate id is ALREADY_EXISTS" "AlreadyExists" publish message paid \
  --correlationKey order-1 --messageId m-1 --ttl 1m
expect "publish: the duplicate names the id" "with id 'm-1'" publish message paid \
  --correlationKey order-1 --messageId m-1 --ttl 1m
expect "publish: variables must be an object" "Property 'variables' is invalid" publish \
  message paid --correlationKey order-1 --variables '[1, 2]'
expect "publish: without a name" "InvalidArgument" publish message "" --correlationKey k
echo "info  create instance (UNIMPLEMENTED until the engine creates instances):"
zb create instance order | sed 's/^/        /' || true

kill -TERM "$pid"
if wait "$pid"; then
  echo "ok    SIGTERM stops the node cleanly"
else
  echo "FAIL  beeline exited with $? after SIGTERM:"
  tail -20 "$log"
  failures=$((failures + 1))
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all zbctl checks passed"
