#!/usr/bin/env bash
# Zeebe's official Java client (io.camunda:zeebe-client-java 8.8, gRPC only) against a real
# `beeline broker` with 2 partitions: topology, deployments (BPMN and DMN), instances with and
# without results, polling and streaming job workers, job failure, back-off, incidents, errors,
# timeouts, variables, cancellation, messages, signals, decisions and the errors a user sees.
# The checks live in src/main/java/beeline/compat/JavaClientCompat.java. Then the client over
# TLS with OAuth and with basic credentials (SecureClientCompat.java).
#
#   compat/java/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/java/run.sh
#
# Maven resolves the client once into $BEELINE_COMPAT_CACHE/m2 (default
# ~/.cache/beeline-compat/m2); later runs work offline. JAVA_HOME picks another JDK (17+).
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
for tool in mvn java; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL  the Java suite needs '$tool' (Maven and a JDK 17 or newer) on the PATH"
    exit 1
  fi
done
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
m2="$compat_cache/m2"
mvn_args=(-B -q -Dstyle.color=never -Dmaven.repo.local="$m2" -Dmdep.outputFile=target/classpath.txt)

# Build the checks and write their classpath: offline first (no network once the cache is
# warm), online when something is missing. Maven's output is shown only when it fails.
echo "==> building the Java client checks (Maven, repository $m2)"
mkdir -p target
if ! mvn -o "${mvn_args[@]}" compile dependency:build-classpath >target/maven.log 2>&1; then
  echo "    (resolving zeebe-client-java and the Maven plugins online)"
  if ! mvn "${mvn_args[@]}" compile dependency:build-classpath >target/maven.log 2>&1; then
    cat target/maven.log
    echo "FAIL  could not build the Java client checks"
    exit 1
  fi
fi
classpath="target/classes:$(cat target/classpath.txt)"

partitions=2
start_beeline 26601 --partitions "$partitions"

failures=0
if ! "$java" -cp "$classpath" beeline.compat.JavaClientCompat "$BEELINE_ADDRESS" "$partitions"; then
  failures=$((failures + 1))
  log_tail
fi
if stop_beeline; then echo "ok    SIGTERM stops the node cleanly"; else failures=$((failures + 1)); fi

# The same client over TLS (a CA of this suite's own) with credentials: OAuth client
# credentials from compat/auth's token endpoint, whose JWKS the broker reads over HTTPS
# (--auth-oidc-jwks-ca), then basic users. Checks in SecureClientCompat.java.
secure="$(mktemp -d)"
make_certificates "$secure"
idp_port=26690
python3 ../auth/token_server.py "$idp_port" "$secure" compat-worker compat-secret \
  "$secure/server.pem" "$secure/server.key" &
idp_pid=$!
stop_secure() { stop_beeline || true; kill "$idp_pid" 2>/dev/null || true; rm -rf "$secure"; }
trap stop_secure EXIT
jwks="https://localhost:$((idp_port + 1))/jwks.json"
for _ in $(seq 1 100); do
  curl -sf --cacert "$secure/ca.pem" "$jwks" >/dev/null && break
  sleep 0.1
done
tls=(--tls-certificate "$secure/server.pem" --tls-private-key "$secure/server.key")
secure_check() {
  if ! "$java" -cp "$classpath" beeline.compat.SecureClientCompat "$@"; then
    failures=$((failures + 1))
    log_tail
  fi
  if stop_beeline; then echo "ok    SIGTERM stops the node cleanly"; else failures=$((failures + 1)); fi
}

start_beeline 26608 "${tls[@]}" --auth-oidc-jwks "$jwks" --auth-oidc-jwks-ca "$secure/ca.pem" \
  --auth-oidc-audience zeebe-api
trap stop_secure EXIT
secure_check oauth "localhost:26608" "$secure/ca.pem" "http://127.0.0.1:$idp_port/token" \
  compat-worker compat-secret ../models/task.bpmn "$secure"

start_beeline 26609 "${tls[@]}" --auth-basic-users "compat:compat-password"
trap stop_secure EXIT
secure_check basic "localhost:26609" "$secure/ca.pem" compat compat-password ../models/task.bpmn

stop_secure
if [ "$failures" -gt 0 ]; then
  echo "Java client suite failed"
  exit 1
fi
echo "all Java client checks passed"
