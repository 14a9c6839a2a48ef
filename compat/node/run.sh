#!/usr/bin/env bash
# The official Camunda 8 Node SDK (@camunda8/sdk, pinned with package-lock.json) against a real
# `beeline broker` with two partitions, through the SDK's Zeebe gRPC client (check.js).
#
#   compat/node/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/node/run.sh
#
# The SDK is installed once (npm ci) into $BEELINE_COMPAT_CACHE/node-sdk
# (default ~/.cache/beeline-compat/node-sdk), again whenever the lockfile changes.
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
sdk="$compat_cache/node-sdk"
if ! cmp -s package-lock.json "$sdk/package-lock.json" || [ ! -d "$sdk/node_modules/@camunda8/sdk" ]; then
  echo "==> installing @camunda8/sdk (npm ci) into $sdk"
  rm -rf "$sdk"
  mkdir -p "$sdk"
  cp package.json package-lock.json "$sdk/"
  (cd "$sdk" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

export BEELINE_PARTITIONS=2
start_beeline 26604 --partitions "$BEELINE_PARTITIONS"

failures=0
# The SDK's configuration for a plaintext gateway without authentication (its README,
# "Camunda 8 Run"): a grpc:// address and no auth strategy.
NODE_PATH="$sdk/node_modules" \
  ZEEBE_GRPC_ADDRESS="grpc://$BEELINE_ADDRESS" \
  CAMUNDA_AUTH_STRATEGY=NONE \
  CAMUNDA_TENANT_ID="" \
  ZEEBE_CLIENT_LOG_LEVEL=NONE \
  node check.js || {
  failures=$((failures + 1))
  log_tail
}

finish "Node SDK"
