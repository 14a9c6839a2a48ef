#!/usr/bin/env bash
# Camunda's Java client, CamundaClient (io.camunda:camunda-client-java 8.8), against a real
# `beeline broker` with 2 partitions, twice: with the client's defaults (REST, port 8080's API
# under /v2, and its polling job worker over REST) and with preferRestOverGrpc(false) (gRPC);
# then the search checks again against a broker whose secondary storage is PostgreSQL (a server
# the suite starts from the machine's installation, as ./scripts/test installs it).
# Topology, status, deployments (BPMN and DMN), instances with and without results, a polling
# worker, complete, fail with back-off, incidents, errors thrown, job updates, variables,
# cancellation, messages published and correlated, signals, decisions, the clock, random
# numbers, and the errors a user sees. The checks live in
# src/main/java/beeline/compat/CamundaClientCompat.java.
#
#   compat/camunda-client/run.sh            # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/camunda-client/run.sh
#   BEELINE_CHECKS=<regex>                  # only the checks whose name matches
#
# Maven resolves the client once into $BEELINE_COMPAT_CACHE/m2 (default
# ~/.cache/beeline-compat/m2); later runs work offline. JAVA_HOME picks another JDK (17+).
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
for tool in mvn java; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL  the CamundaClient suite needs '$tool' (Maven and a JDK 17 or newer) on the PATH"
    exit 1
  fi
done
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
m2="$compat_cache/m2"
mvn_args=(-B -q -Dstyle.color=never -Dmaven.repo.local="$m2" -Dmdep.outputFile=target/classpath.txt)

# Build the checks and write their classpath: offline first (no network once the cache is
# warm), online when something is missing. Maven's output is shown only when it fails.
echo "==> building the CamundaClient checks (Maven, repository $m2)"
mkdir -p target
if ! mvn -o "${mvn_args[@]}" compile dependency:build-classpath >target/maven.log 2>&1; then
  echo "    (resolving camunda-client-java and the Maven plugins online)"
  if ! mvn "${mvn_args[@]}" compile dependency:build-classpath >target/maven.log 2>&1; then
    cat target/maven.log
    echo "FAIL  could not build the CamundaClient checks"
    exit 1
  fi
fi
classpath="target/classes:$(cat target/classpath.txt)"

partitions=2
start_beeline 26605 --partitions "$partitions"

failures=0
if ! "$java" -cp "$classpath" beeline.compat.CamundaClientCompat \
  "$BEELINE_ADDRESS" "$BEELINE_REST" "$BEELINE_MONITORING" "$partitions"; then
  failures=$((failures + 1))
  log_tail
fi

# The searches and gets again, answered from PostgreSQL (unless BEELINE_CHECKS leaves them out).
if [ -n "${BEELINE_CHECKS:-}" ] && ! [[ "search (REST only)" =~ $BEELINE_CHECKS ]]; then
  echo "    (the search checks with PostgreSQL are not among BEELINE_CHECKS)"
elif start_postgres fsync=off; then
  if stop_beeline; then echo "ok    SIGTERM stops the node cleanly"; else failures=$((failures + 1)); fi
  echo "==> the search checks with PostgreSQL secondary storage"
  start_beeline 26605 --partitions "$partitions" --secondary-storage postgres \
    --secondary-storage-url "$BEELINE_POSTGRES_URL"
  trap 'stop_beeline; stop_postgres' EXIT
  if ! BEELINE_CHECKS='^search' "$java" -cp "$classpath" beeline.compat.CamundaClientCompat \
    "$BEELINE_ADDRESS" "$BEELINE_REST" "$BEELINE_MONITORING" "$partitions"; then
    failures=$((failures + 1))
    log_tail
  fi
elif [ "${BEELINE_REQUIRE_POSTGRES:-}" = 1 ]; then
  echo "FAIL  PostgreSQL is required (BEELINE_REQUIRE_POSTGRES=1) but not installed"
  failures=$((failures + 1))
else
  echo "SKIPPED: the search checks with PostgreSQL need a PostgreSQL installation;" \
    "./scripts/test installs one"
fi

finish "CamundaClient"
