#!/usr/bin/env bash
# Camunda's Orchestration Cluster API client for Node (@camunda8/orchestration-cluster-api, the
# 8.8 line, pinned with package-lock.json) against a real `beeline broker` with two partitions,
# over the REST API only: the client's operations and its polling job worker (check.js), with
# the client validating its requests and every answer against the 8.8 API specification.
#
#   compat/orchestration-api/run.sh         # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/orchestration-api/run.sh
#
# The client is installed once (npm ci) into $BEELINE_COMPAT_CACHE/orchestration-api (default
# ~/.cache/beeline-compat/orchestration-api), again whenever the lockfile changes.
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
client="$compat_cache/orchestration-api"
if ! cmp -s package-lock.json "$client/package-lock.json" ||
  [ ! -d "$client/node_modules/@camunda8/orchestration-cluster-api" ]; then
  echo "==> installing @camunda8/orchestration-cluster-api (npm ci) into $client"
  rm -rf "$client"
  mkdir -p "$client"
  cp package.json package-lock.json "$client/"
  (cd "$client" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

export BEELINE_PARTITIONS=2
start_beeline 26606 --partitions "$BEELINE_PARTITIONS"

failures=0
NODE_PATH="$client/node_modules" \
  CAMUNDA_REST_ADDRESS="$BEELINE_REST" \
  BEELINE_MONITORING="$BEELINE_MONITORING" \
  node check.js || {
  failures=$((failures + 1))
  log_tail
}

finish "Orchestration Cluster API"
