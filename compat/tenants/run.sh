#!/usr/bin/env bash
# Multi-tenancy with the official clients: a `beeline broker --multi-tenancy` with 2 partitions,
# basic users alice (assigned tenant-a) and bob (tenant-b). Camunda's Java client
# (CamundaClient, its defaultTenantId and defaultJobWorkerTenantIds, over REST and over gRPC;
# camunda-client/src/main/java/beeline/compat/TenantsCompat.java) and pyzeebe 4.7 (tenant_id on
# its commands, tenant_ids on its worker; check.py) each deploy a process with the same id in
# both tenants, start instances with the same correlation key, work their jobs and publish a
# message: instances, jobs and messages never cross, a tenant not the user's is refused, and
# searches show each user its own tenant only.
#
#   compat/tenants/run.sh                   # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/tenants/run.sh
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
install_pyzeebe
for tool in mvn java; do
  if ! command -v "$tool" >/dev/null; then
    echo "FAIL  the tenants suite needs '$tool' (Maven and a JDK 17 or newer) on the PATH"
    exit 1
  fi
done
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
m2="$compat_cache/m2"
client_project=../camunda-client
mvn_args=(-B -q -Dstyle.color=never -Dmaven.repo.local="$m2" -Dmdep.outputFile=target/classpath.txt)
echo "==> building the CamundaClient checks (Maven, repository $m2)"
mkdir -p "$client_project/target"
if ! (cd "$client_project" && { mvn -o "${mvn_args[@]}" compile dependency:build-classpath ||
  mvn "${mvn_args[@]}" compile dependency:build-classpath; } >target/maven-tenants.log 2>&1); then
  cat "$client_project/target/maven-tenants.log"
  echo "FAIL  could not build the CamundaClient checks"
  exit 1
fi
classpath="$client_project/target/classes:$(cat "$client_project/target/classpath.txt")"

start_beeline 26608 --partitions 2 --auth-basic-users alice:alice-pw,bob:bob-pw \
  --multi-tenancy --tenant-assignments alice=tenant-a,bob=tenant-b

failures=0
if ! "$java" -cp "$classpath" beeline.compat.TenantsCompat "$BEELINE_ADDRESS" "$BEELINE_REST"; then
  failures=$((failures + 1))
  log_tail
fi
if ! BEELINE_ADDRESS="$BEELINE_ADDRESS" BEELINE_REST="$BEELINE_REST" "$venv/bin/python" check.py; then
  failures=$((failures + 1))
  log_tail
fi

finish "tenants"
