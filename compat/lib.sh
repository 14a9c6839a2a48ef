# Shared by the client compatibility suites (compat/<client>/run.sh): source it, then call
# `start_beeline`. It starts a real `beeline broker` on its own ports and data dir, waits until
# it is ready, and stops it when the script exits.
#
#   BEELINE_BIN          the binary to test (default: build the release binary, as
#                        ./scripts/beeline does)
#   BEELINE_COMPAT_CACHE where clients are installed once (default ~/.cache/beeline-compat)

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

compat_cache="${BEELINE_COMPAT_CACHE:-$HOME/.cache/beeline-compat}"
mkdir -p "$compat_cache"

# start_beeline <grpc-port> [more broker flags...]: sets BEELINE_PID, BEELINE_LOG_FILE,
# BEELINE_ADDRESS (127.0.0.1:<port>, the gRPC gateway), BEELINE_REST (the REST API's base URL,
# without /v2) and BEELINE_MONITORING (its monitoring base URL).
start_beeline() {
  local grpc_port="$1"
  shift
  local bin="${BEELINE_BIN:-}"
  if [ -z "$bin" ]; then
    echo "==> building beeline (release)"
    build_beeline
    bin="$beeline_bin"
  fi
  # Monitoring and REST ports derive from the gRPC port, so suites never collide.
  local monitoring_port=$((grpc_port - 26500 + 9600))
  local rest_port=$((grpc_port - 26500 + 8000))
  BEELINE_DATA="$(mktemp -d)"
  BEELINE_LOG_FILE="$BEELINE_DATA/beeline.log"
  BEELINE_ADDRESS="127.0.0.1:$grpc_port"
  BEELINE_REST="http://127.0.0.1:$rest_port"
  BEELINE_MONITORING="http://127.0.0.1:$monitoring_port"
  "$bin" broker --data-dir "$BEELINE_DATA/data" --host 127.0.0.1 --grpc-port "$grpc_port" \
    --monitoring-port "$monitoring_port" --rest-port "$rest_port" "$@" >"$BEELINE_LOG_FILE" 2>&1 &
  BEELINE_PID=$!
  trap stop_beeline EXIT
  for _ in $(seq 1 120); do
    if curl -sf "$BEELINE_MONITORING/ready" >/dev/null; then return 0; fi
    if ! kill -0 "$BEELINE_PID" 2>/dev/null; then
      echo "beeline exited before it was ready:"
      cat "$BEELINE_LOG_FILE"
      return 1
    fi
    sleep 0.5
  done
  echo "beeline was not ready after 60 s:"
  tail -50 "$BEELINE_LOG_FILE"
  return 1
}

# stop_beeline: SIGTERM, and the exit status must be 0 (a clean shutdown).
stop_beeline() {
  local status=0
  if [ -n "${BEELINE_PID:-}" ] && kill -0 "$BEELINE_PID" 2>/dev/null; then
    kill -TERM "$BEELINE_PID"
    wait "$BEELINE_PID" || status=$?
    if [ "$status" -ne 0 ]; then
      echo "FAIL  beeline exited with $status after SIGTERM; its log ends:"
      tail -30 "$BEELINE_LOG_FILE"
    fi
  fi
  BEELINE_PID=
  rm -rf "${BEELINE_DATA:-/nonexistent}"
  return "$status"
}

# log_tail: the end of the broker's log, to show after a failed check.
log_tail() {
  echo "---- the broker's log ends:"
  tail -30 "$BEELINE_LOG_FILE"
}

# finish <suite>: stops the broker (its clean SIGTERM exit is one more check) and ends the
# script, failing if any check failed (the caller counts them in `failures`).
finish() {
  if stop_beeline; then echo "ok    SIGTERM stops the node cleanly"; else failures=$((failures + 1)); fi
  if [ "${failures:-0}" -gt 0 ]; then
    echo "$1 suite failed"
    exit 1
  fi
  echo "all $1 checks passed"
}

# install_zbctl: zbctl 8.4 (npm zbctl@8.4.1) into the cache, once; sets $zbctl.
install_zbctl() {
  zbctl="$compat_cache/zbctl/node_modules/zbctl/bin/zbctl-cli.linux"
  if [ ! -x "$zbctl" ]; then
    echo "==> installing zbctl 8.4 (npm zbctl@8.4.1) into $compat_cache/zbctl"
    npm install --prefix "$compat_cache/zbctl" --no-audit --no-fund zbctl@8.4.1 >/dev/null
  fi
}

# install_pyzeebe: pyzeebe 4.7.0 into a virtualenv in the cache, once; sets $venv.
install_pyzeebe() {
  local version=4.7.0
  venv="$compat_cache/pyzeebe-venv"
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pyzeebe') != '$version')" \
      2>/dev/null; then
    echo "==> installing pyzeebe $version into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "pyzeebe==$version"
  fi
}

# make_certificates <dir>: a CA (ca.pem) and a server certificate for localhost and 127.0.0.1
# signed by it (server.pem, server.key), made with openssl.
make_certificates() {
  local dir="$1"
  (
    cd "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=beeline compat CA" \
      -keyout ca.key -out ca.pem 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
      -keyout server.key -out server.csr 2>/dev/null
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
      -extfile server.ext -out server.pem 2>/dev/null
  )
}

# start_postgres [SETTING...]: a PostgreSQL server of the suite's own, from the machine's
# installation (as ./scripts/test installs it): its own directory, a free loopback port, run as
# the postgres user when root (the server refuses root), with these `-c` settings (e.g.
# fsync=off); stopped and deleted by stop_postgres. Sets BEELINE_POSTGRES_URL and psql_cmd.
# Returns 1 where PostgreSQL is not installed.
start_postgres() {
  local bin port settings="" setting
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then return 1; fi
  POSTGRES_BIN="$bin"
  POSTGRES_DIR="$(mktemp -d)"
  postgres_as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$POSTGRES_DIR"
    postgres_as=(runuser -u postgres --)
  fi
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  for setting in "$@"; do settings="$settings -c $setting"; done
  "${postgres_as[@]}" "$bin/initdb" -D "$POSTGRES_DIR/data" -A trust -U beeline --no-sync -E UTF8 \
    >"$POSTGRES_DIR/initdb.log" 2>&1 || { cat "$POSTGRES_DIR/initdb.log"; return 1; }
  "${postgres_as[@]}" "$bin/pg_ctl" -D "$POSTGRES_DIR/data" -l "$POSTGRES_DIR/log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $POSTGRES_DIR$settings" start >/dev/null \
    || { cat "$POSTGRES_DIR/log"; return 1; }
  BEELINE_POSTGRES_URL="postgresql://beeline@127.0.0.1:$port/postgres"
  psql_cmd=("$bin/psql" -q -h 127.0.0.1 -p "$port" -U beeline -d postgres)
}

# stop_postgres: stops the server start_postgres started and deletes its directory.
stop_postgres() {
  if [ -n "${POSTGRES_DIR:-}" ]; then
    "${postgres_as[@]}" "$POSTGRES_BIN/pg_ctl" -D "$POSTGRES_DIR/data" -m immediate -w stop \
      >/dev/null 2>&1 || true
    rm -rf "$POSTGRES_DIR"
    POSTGRES_DIR=
  fi
}
