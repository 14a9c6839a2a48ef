#!/usr/bin/env bash
# Zeebe's Go client (github.com/camunda/zeebe/clients/go/v8, from the Go module proxy; see
# main.go for the version) against a real `beeline broker` with 2 partitions: deploy, create,
# job workers (polling and streaming), failures, incidents, errors, timeouts, variables, cancel,
# messages, signals, decisions and the error codes a Go user sees; then a clean shutdown.
#
#   compat/go/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/go/run.sh
#
# The module and build caches are Go's defaults (~/go/pkg/mod, ~/.cache/go-build), so only the
# first run downloads and compiles the client.
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
if ! command -v go >/dev/null; then
  echo "FAIL  Go is not installed (https://go.dev/dl/)"
  exit 1
fi

# The client would let these override the configuration it is given.
unset ZEEBE_ADDRESS ZEEBE_HOST ZEEBE_PORT ZEEBE_INSECURE_CONNECTION ZEEBE_CA_CERTIFICATE_PATH \
  ZEEBE_OVERRIDE_AUTHORITY ZEEBE_KEEP_ALIVE ZEEBE_CLIENT_ID ZEEBE_CLIENT_SECRET

echo "==> building the Go client suite"
bin_dir="$(mktemp -d)"
go build -mod=readonly -o "$bin_dir/compat-go" .

start_beeline 26602 --partitions 2

failures=0
if ! BEELINE_ADDRESS="$BEELINE_ADDRESS" "$bin_dir/compat-go"; then failures=$((failures + 1)); fi
rm -rf "$bin_dir"

finish "Go client"
