#!/usr/bin/env bash
# Camunda's Java client, CamundaClient (io.camunda:camunda-client-java 8.8), against a real
# `beeline broker` with 2 partitions, twice: with the client's defaults (REST, port 8080's API
# under /v2, and its polling job worker over REST) and with preferRestOverGrpc(false) (gRPC).
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

finish "CamundaClient"
