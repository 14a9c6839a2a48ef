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
pyzeebe_version=4.7.0
venv="$compat_cache/pyzeebe-venv"
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pyzeebe') != '$pyzeebe_version')" \
    2>/dev/null; then
  echo "==> installing pyzeebe $pyzeebe_version into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "pyzeebe==$pyzeebe_version"
fi

export BEELINE_PARTITIONS=2
start_beeline 26603 --partitions "$BEELINE_PARTITIONS"

failures=0
BEELINE_ADDRESS="$BEELINE_ADDRESS" "$venv/bin/python" check.py || {
  failures=$((failures + 1))
  log_tail
}

finish "pyzeebe"
