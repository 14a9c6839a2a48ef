#!/usr/bin/env bash
# Three `beeline broker` processes as one cluster on this machine (3 partitions, placed
# round-robin; replication factor 1 by default: each partition on one broker; with
# `--replication-factor 3` every broker holds a replica of every partition and each partition's
# leader is elected), and zbctl 8.4 pointed at broker 0 alone: the topology lists every broker
# with its replicas' roles; a deployment reaches every partition; instances are created on
# every partition; messages are correlated to instances on other brokers; a signal is broadcast
# to every partition; the jobs of every partition are activated and completed through broker
# 0; a completed instance is gone (cancelling it is NOT_FOUND, also from a partition led by
# another broker); a broker whose settings contradict the cluster's refuses to join, naming the
# setting; SIGTERM stops each broker cleanly.
#
#   compat/cluster/run.sh                      # builds the release binary first
#   compat/cluster/run.sh --replication-factor 3
#   BEELINE_BIN=path/to/beeline compat/cluster/run.sh
set -euo pipefail
cd "$(dirname "$0")"

# Without a factor: the suite with factor 1, then with factor 3 (one build for both).
if [ $# -eq 0 ]; then
  if [ -z "${BEELINE_BIN:-}" ]; then
    source ../lib.sh
    echo "==> building beeline (release)"
    build_beeline
    export BEELINE_BIN="$beeline_bin"
  fi
  ./run.sh --replication-factor 1
  exec ./run.sh --replication-factor 3
fi
replication_factor=
while [ $# -gt 0 ]; do
  case "$1" in
    --replication-factor) replication_factor="$2"; shift 2 ;;
    *) echo "usage: $0 [--replication-factor 1|2|3]" >&2; exit 2 ;;
  esac
done

source ../lib.sh
install_zbctl

bin="${BEELINE_BIN:-}"
if [ -z "$bin" ]; then
  echo "==> building beeline (release)"
  build_beeline
  bin="$beeline_bin"
fi

work="$(mktemp -d)"
pids=()
grpc_port() { echo $((26610 + $1)); }
internal_port() { echo $((26620 + $1)); }
monitoring_port() { echo $((9710 + $1)); }
# Each broker is given one other as its contact point, in a ring (broker 0 knows of 2, 1 of 0,
# 2 of 1): the brokers learn the rest, and where to reach them, from each other.
contact_point() { echo "127.0.0.1:$(internal_port $((($1 + 2) % 3)))"; }

# start_broker <node> [more flags...]: starts broker <node> of the three in the background.
start_broker() {
  local node="$1"
  shift
  "$bin" broker --node-id "$node" --cluster-size 3 --partitions 3 \
    --replication-factor "$replication_factor" \
    --contact-points "$(contact_point "$node")" --host 127.0.0.1 --data-dir "$work/data-$node" \
    --grpc-port "$(grpc_port "$node")" --internal-port "$(internal_port "$node")" \
    --monitoring-port "$(monitoring_port "$node")" --rest-port $((8110 + node)) \
    --secondary-storage none "$@" >"$work/broker-$node.log" 2>&1 &
  pids[$node]=$!
}

stop_brokers() {
  local status=0 node
  for node in "${!pids[@]}"; do
    if kill -0 "${pids[$node]}" 2>/dev/null; then
      kill -TERM "${pids[$node]}"
      if ! wait "${pids[$node]}"; then
        echo "FAIL  broker $node did not stop cleanly after SIGTERM; its log ends:"
        tail -20 "$work/broker-$node.log"
        status=1
      fi
    fi
  done
  pids=()
  return "$status"
}
trap 'stop_brokers >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

started=$(date +%s)
for node in 0 1 2; do start_broker "$node"; done
for node in 0 1 2; do
  for _ in $(seq 1 120); do
    if curl -sf "http://127.0.0.1:$(monitoring_port "$node")/ready" >/dev/null; then break; fi
    if ! kill -0 "${pids[$node]}" 2>/dev/null; then
      echo "broker $node exited before it was ready:"
      cat "$work/broker-$node.log"
      exit 1
    fi
    sleep 0.25
  done
done

address="127.0.0.1:$(grpc_port 0)"
zb() { "$zbctl" --insecure --address "$address" --requestTimeout 10s "$@" 2>&1; }
failures=0
out=
run() { out="$(zb "$@" | tr -s ' ' || true)"; }
has() {
  local what="$1" want
  shift
  for want in "$@"; do
    if ! grep -qF -- "$want" <<<"$out"; then
      echo "FAIL  $what: expected '$want' in:"
      sed 's/^/        /' <<<"$out"
      failures=$((failures + 1))
      return 0
    fi
  done
  echo "ok    $what"
}
field() { grep -o "\"$1\": \"\?[^\",]*" <<<"$out" | head -1 | sed 's/.*: "\?//' || true; }
# The partition a key belongs to (Zeebe's key layout: partition id above bit 51).
partition_of() { echo $(($1 >> 51)); }

# The brokers find each other within a few gossip rounds (and, replicated, elect leaders).
for _ in $(seq 1 80); do
  run status
  if [ "$(grep -c ': Leader, Healthy' <<<"$out")" -eq 3 ] &&
    [ "$(grep -c ': Follower, Healthy' <<<"$out")" -eq $((3 * (replication_factor - 1))) ]; then
    break
  fi
  sleep 0.25
done
has "status through broker 0: the cluster" "Cluster size: 3" "Partitions count: 3" \
  "Replication factor: $replication_factor"
has "status: every broker with its replicas" "Broker 0 - 127.0.0.1:$(grpc_port 0)" \
  "Broker 1 - 127.0.0.1:$(grpc_port 1)" "Broker 2 - 127.0.0.1:$(grpc_port 2)" \
  "Partition 1 : Leader, Healthy" "Partition 2 : Leader, Healthy" "Partition 3 : Leader, Healthy"
if [ "$(grep -c ': Leader, Healthy' <<<"$out")" -eq 3 ] &&
  [ "$(grep -c ': Follower, Healthy' <<<"$out")" -eq $((3 * (replication_factor - 1))) ]; then
  echo "ok    one leader and $((replication_factor - 1)) followers per partition"
else
  echo "FAIL  one leader and $((replication_factor - 1)) followers per partition:"
  sed 's/^/        /' <<<"$out"
  failures=$((failures + 1))
fi

run deploy resource order.bpmn
has "deploy through broker 0" '"bpmnProcessId": "cluster-order"'

# One instance on each partition (creations go round-robin; a partition the deployment has not
# reached yet answers NOT_FOUND and the next attempt goes on).
declare -A instance_of=() order_of=()
attempt=0
while [ "${#instance_of[@]}" -lt 3 ] && [ "$attempt" -lt 60 ]; do
  order="order-$attempt"
  attempt=$((attempt + 1))
  run create instance cluster-order --variables "{\"orderId\": \"$order\"}"
  key="$(field processInstanceKey)"
  if [ -z "$key" ]; then sleep 0.1; continue; fi
  partition="$(partition_of "$key")"
  if [ -z "${instance_of[$partition]:-}" ]; then
    instance_of[$partition]="$key"
    order_of[$partition]="$order"
  fi
done
if [ "${#instance_of[@]}" -eq 3 ]; then
  echo "ok    instances on partitions 1, 2 and 3: ${instance_of[*]}"
else
  echo "FAIL  instances on every partition: only on ${!instance_of[*]}"
  failures=$((failures + 1))
fi

# Every payment: published through broker 0 to the partition of its correlation key, which
# then correlates it to an instance on its own partition, most of them on another broker.
for partition in "${!order_of[@]}"; do
  run publish message cluster-paid --correlationKey "${order_of[$partition]}" --ttl 1m
  has "publish the payment of the instance on partition $partition" '"key":'
done
run broadcast signal cluster-go
has "broadcast the signal through broker 0" '"key":'

# The ship jobs of every partition, activated and completed through broker 0.
declare -A done_on=()
for _ in $(seq 1 40); do
  run activate jobs cluster-ship --maxJobsToActivate 10 --worker shipper --timeout 1m
  for job in $(grep -o '"key": "[0-9]*' <<<"$out" | grep -o '[0-9]*$'); do
    run complete job "$job"
    if grep -q "Completed job" <<<"$out"; then done_on[$(partition_of "$job")]=1; fi
  done
  if [ "${#done_on[@]}" -eq 3 ]; then break; fi
  sleep 0.25
done
if [ "${#done_on[@]}" -eq 3 ]; then
  echo "ok    jobs of partitions 1, 2 and 3 activated and completed through broker 0"
else
  echo "FAIL  jobs of every partition: only of ${!done_on[*]}"
  failures=$((failures + 1))
fi
# A completed instance is gone: cancelling it is NOT_FOUND, the rejection of the partition's
# leader, wherever it is.
for partition in "${!instance_of[@]}"; do
  for _ in $(seq 1 20); do
    run cancel instance "${instance_of[$partition]}"
    if grep -q "NotFound" <<<"$out"; then break; fi
    sleep 0.25
  done
  has "the instance on partition $partition completed" "NotFound"
done

# A fourth broker whose partition count contradicts the cluster's does not join.
"$bin" broker --node-id 2 --cluster-size 3 --partitions 4 \
  --replication-factor "$replication_factor" \
  --contact-points "127.0.0.1:$(internal_port 0)" --host 127.0.0.1 --data-dir "$work/data-x" \
  --grpc-port 26619 --internal-port 26629 --monitoring-port 9719 --rest-port 8119 \
  --secondary-storage none >"$work/broker-x.log" 2>&1 && status=0 || status=$?
out="$(cat "$work/broker-x.log")"
if [ "$status" -ne 0 ]; then echo "ok    the contradicting broker exits ($status)"; else
  echo "FAIL  the contradicting broker exits"
  failures=$((failures + 1))
fi
has "it names the setting" "--partitions: this broker has 4, but broker"

if stop_brokers; then echo "ok    SIGTERM stops every broker cleanly"; else failures=$((failures + 1)); fi
echo "the cluster suite (replication factor $replication_factor) took $(($(date +%s) - started)) s"
if [ "$failures" -gt 0 ]; then
  for node in 0 1 2; do
    echo "---- broker $node's log ends:"
    tail -15 "$work/broker-$node.log"
  done
  echo "cluster suite failed"
  exit 1
fi
echo "all cluster checks passed"
