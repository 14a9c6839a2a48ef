#!/usr/bin/env bash
# pyzeebe 4.x (the community Python client, from PyPI) against a real `beeline broker` with
# two partitions: every RPC pyzeebe's public API offers (check.py says which it lacks).
#
#   compat/python/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/python/run.sh
#
# pyzeebe is installed once into a virtualenv under $BEELINE_COMPAT_CACHE
# (default ~/.cache/beeline-compat/pyzeebe-venv).
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
install_pyzeebe

export BEELINE_PARTITIONS=2
start_beeline 26603 --partitions "$BEELINE_PARTITIONS"

failures=0
BEELINE_ADDRESS="$BEELINE_ADDRESS" "$venv/bin/python" check.py || {
  failures=$((failures + 1))
  log_tail
}

finish "pyzeebe"
