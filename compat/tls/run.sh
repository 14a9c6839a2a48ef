#!/usr/bin/env bash
# TLS on both APIs, with the official clients: a `beeline broker` given a certificate signed by
# a CA of this suite's own (`--tls-certificate`, `--tls-private-key`) serves zbctl 8.4 (the Go
# client) and pyzeebe (grpcio) over gRPC with TLS, and curl over HTTPS on the REST API; clients
# that do not trust the CA, or speak plaintext, are refused.
#
#   compat/tls/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/tls/run.sh
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
install_zbctl
install_pyzeebe

certs="$(mktemp -d)"
make_certificates "$certs"
start_beeline 26606 --tls-certificate "$certs/server.pem" --tls-private-key "$certs/server.key"
grpc_port="${BEELINE_ADDRESS##*:}"
rest_port="${BEELINE_REST##*:}"
address="localhost:$grpc_port"
rest="https://localhost:$rest_port"

failures=0
check() {
  local what="$1" want="$2" got="$3"
  if grep -qF -- "$want" <<<"$got"; then
    echo "ok    $what"
  else
    echo "FAIL  $what: expected '$want' in:"
    sed 's/^/        /' <<<"$got"
    failures=$((failures + 1))
  fi
}

zb() { "$zbctl" --address "$address" --requestTimeout 10s "$@" 2>&1 || true; }
check "zbctl over TLS (--certPath): status" "Partition 1 : Leader, Healthy" \
  "$(zb --certPath "$certs/ca.pem" status)"
check "zbctl over TLS: deploy" '"compat-task"' \
  "$(zb --certPath "$certs/ca.pem" deploy resource ../models/task.bpmn)"
check "zbctl over TLS: create an instance" '"processInstanceKey"' \
  "$(zb --certPath "$certs/ca.pem" create instance compat-task --variables '{"jobType":"tls","retries":1}')"
check "zbctl without the CA is refused" "certificate" "$(zb status)"
check "zbctl in plaintext (--insecure) is refused" "Error" "$(zb --insecure status)"

check "REST over HTTPS: topology" '"partitionsCount":1' \
  "$(curl -sS --cacert "$certs/ca.pem" "$rest/v2/topology" 2>&1 || true)"
check "REST over HTTP/2 with TLS (ALPN): topology" "HTTP/2 200" \
  "$(curl -sS -i --http2 --cacert "$certs/ca.pem" "$rest/v2/topology" 2>&1 || true)"
check "REST without the CA is refused" "certificate" \
  "$(curl -sS "$rest/v2/topology" 2>&1 || true)"
check "REST in plaintext gets no answer" "curl: (" \
  "$(curl -sS --max-time 5 "http://localhost:$rest_port/v2/topology" 2>&1 || true)"

BEELINE_TLS_ADDRESS="$address" BEELINE_CA="$certs/ca.pem" BEELINE_MODEL=../models/task.bpmn \
  "$venv/bin/python" check.py || failures=$((failures + 1))

rm -rf "$certs"
finish "TLS"
