#!/usr/bin/env bash
# zbctl, Zeebe's Go CLI (8.4.0, from the community npm package zbctl@8.4.1), against a real
# `beeline broker`: topology and message publishing, the errors a user sees, clean shutdown.
#
#   compat/zbctl/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/zbctl/run.sh
#
# zbctl is installed once into $BEELINE_COMPAT_CACHE (default ~/.cache/beeline-compat).
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
zbctl="$compat_cache/zbctl/node_modules/zbctl/bin/zbctl-cli.linux"
if [ ! -x "$zbctl" ]; then
  echo "==> installing zbctl 8.4 (npm zbctl@8.4.1) into $compat_cache/zbctl"
  npm install --prefix "$compat_cache/zbctl" --no-audit --no-fund zbctl@8.4.1 >/dev/null
fi

start_beeline 26599 --partitions 3

zb() { "$zbctl" --insecure --address "$BEELINE_ADDRESS" --requestTimeout 10s "$@" 2>&1; }
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
expect "publish: without a name" "InvalidArgument" publish message "" --correlationKey k
expect "create: an unknown process is NOT_FOUND" "NotFound" create instance no-such-process
expect "create: the error names the process id" "process ID 'no-such-process'" create instance \
  no-such-process

if stop_beeline; then echo "ok    SIGTERM stops the node cleanly"; else failures=$((failures + 1)); fi

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all zbctl checks passed"
