#!/usr/bin/env bash
# zbctl, Zeebe's Go CLI (8.4.0, from the community npm package zbctl@8.4.1), against a real
# `beeline broker`: topology, deploying order.bpmn and discount.dmn, instances (with a result),
# working jobs by hand (activate, complete, fail, retries, timeout, thrown errors), variables,
# incidents, cancellation, messages, signals, decisions, the errors a user sees, clean shutdown.
#
#   compat/zbctl/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/zbctl/run.sh
#
# zbctl is installed once into $BEELINE_COMPAT_CACHE (default ~/.cache/beeline-compat).
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
install_zbctl

start_beeline 26599 --partitions 3

zb() { "$zbctl" --insecure --address "$BEELINE_ADDRESS" --requestTimeout 10s "$@" 2>&1; }
failures=0
# run <zbctl args...>: runs zbctl; its output (runs of spaces squeezed to one) is in $out.
out=
run() { out="$(zb "$@" | tr -s ' ' || true)"; }
# has <description> <substring>...: the last output must contain every substring.
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
# expect <description> <substring> <zbctl args...>: the output must contain the substring.
expect() {
  local what="$1" want="$2"
  shift 2
  run "$@"
  has "$what" "$want"
}
# field <name>: the first value of a JSON field in the last output ("" when there is none).
field() { grep -o "\"$1\": \"\?[^\",]*" <<<"$out" | head -1 | sed 's/.*: "\?//' || true; }

expect "status: cluster size" "Cluster size: 1" status
expect "status: partitions" "Partitions count: 3" status
expect "status: replication" "Replication factor: 1" status
expect "status: partition 3 led and healthy" "Partition 3 : Leader, Healthy" status
expect "publish a message" '"key":' publish message paid --correlationKey order-1 \
  --messageId m-1 --variables '{"amount": 5}' --ttl 1m
expect "publish: duplicate id is ALREADY_EXISTS" "AlreadyExists" publish message paid \
  --correlationKey order-1 --messageId m-1 --ttl 1m
expect "publish: the duplicate names the id" "with id 'm-1'" publish message paid \
  --correlationKey order-1 --messageId m-1 --ttl 1m
expect "publish: without a name" "InvalidArgument" publish message "" --correlationKey k
expect "create: an unknown process is NOT_FOUND" "NotFound" create instance no-such-process
expect "create: the error names the process id" "process ID 'no-such-process'" create instance \
  no-such-process

# Deploying and starting.
expect "deploy (DeployProcess, deprecated): the processes" '"bpmnProcessId": "zbctl-restock"' \
  deploy order.bpmn
run deploy resource order.bpmn discount.dmn
has "deploy resource: BPMN and DMN" '"bpmnProcessId": "zbctl-order"' \
  '"bpmnProcessId": "zbctl-restock"' '"dmnDecisionId": "zbctl-discount"' \
  '"dmnDecisionRequirementsId": "zbctl-pricing"' '"resourceName": "discount.dmn"'
order_key="$(grep -A3 '"bpmnProcessId": "zbctl-order"' <<<"$out" \
  | grep -o '"processDefinitionKey": "[0-9]*' | grep -o '[0-9]*$' || true)"
expect "deploy: an invalid model is INVALID_ARGUMENT" "InvalidArgument" deploy resource broken.bpmn
run create instance zbctl-order --variables '{"n": 1}'
has "create instance" '"bpmnProcessId": "zbctl-order"' '"version": 1' '"processInstanceKey":'
instance="$(field processInstanceKey)"

# Working its job by hand: activate, variables, fail, incident, retries, timeout, complete.
run activate jobs zbctl-pack --maxJobsToActivate 1 --worker packer
has "activate jobs: the job of the instance" "\"processInstanceKey\": \"$instance\"" \
  '"elementId": "pack"' '"worker": "packer"' '"retries": 2' 'station' 'north' '\"n\":1'
job="$(field key)"
element="$(field elementInstanceKey)"
expect "set variables: on the instance" "to '{\"note\": \"fragile\"}' with command" \
  set variables "$instance" --variables '{"note": "fragile"}'
expect "set variables: local to the task" "to '{\"box\": \"small\"}' with command" \
  set variables "$element" --local --variables '{"box": "small"}'
expect "set variables: an unknown scope is NOT_FOUND" "NotFound" set variables 2251799813999999 \
  --variables '{"a": 1}'
expect "fail job: retries left" "Failed job with key '$job'" fail job "$job" --retries 1 \
  --errorMessage "printer jam"
run activate jobs zbctl-pack
has "activate jobs: the failed job again, with the new variables" "\"key\": \"$job\"" \
  '"retries": 1' '\"note\":\"fragile\"' '\"box\":\"small\"'
expect "fail job: no retries left (an incident)" "remaining retries to '0'" fail job "$job" \
  --retries 0 --errorMessage "printer on fire"
expect "activate jobs: none while the incident is open" '"jobs": []' activate jobs zbctl-pack \
  --requestTimeout 1s
expect "update retries" "Updated the retries of job with key '$job' to '2'" update retries "$job" \
  --retries 2
# The gateway API cannot look incidents up (Operate does); keys count up per partition and
# the incident came after the job, so try the keys after the job's: the others are NOT_FOUND.
incident=
for candidate in $(seq $((job + 1)) $((job + 40))); do
  run resolve incident "$candidate"
  if grep -q "NotFound" <<<"$out"; then continue; fi
  incident="$candidate"
  break
done
has "resolve incident" "Resolved an incident of a process instance with key '$incident'"
expect "resolve incident: again is NOT_FOUND" "NotFound" resolve incident "${incident:-0}"
run activate jobs zbctl-pack --timeout 1m
has "activate jobs: activatable again after resolving" "\"key\": \"$job\"" '"retries": 2'
expect "update timeout" "Updated the timeout of job with key '$job' to '500'" update timeout \
  "$job" --timeout 500
run activate jobs zbctl-pack
has "activate jobs: back after the shortened timeout" "\"key\": \"$job\""
expect "complete job" "Completed job with key '$job'" complete job "$job" \
  --variables '{"packed": true}'
expect "complete job: again is NOT_FOUND" "NotFound" complete job "$job"

# A second instance, by definition key: an error nobody catches raises an incident; cancel it.
run create instance "${order_key:-0}" --variables '{"n": 2}'
has "create instance: by process definition key" '"bpmnProcessId": "zbctl-order"'
instance="$(field processInstanceKey)"
run activate jobs zbctl-pack
has "activate jobs: the second instance's job" "\"processInstanceKey\": \"$instance\""
job="$(field key)"
expect "throwError job: uncaught" "Threw error with code 'NO_BOX'" throwError job "${job:-0}" \
  --errorCode NO_BOX --errorMessage "no box left"
expect "activate jobs: none after the thrown error" '"jobs": []' activate jobs zbctl-pack \
  --requestTimeout 1s
expect "cancel instance" "Canceled process instance with key '$instance'" cancel instance \
  "$instance"
expect "cancel instance: again is NOT_FOUND" "NotFound" cancel instance "$instance"

# with_result <create args...>: creates an instance with a result in the background, completes
# its job with {"weight": 7} meanwhile, and leaves zbctl's answer in $out.
with_result() {
  local result_file result_pid job=
  result_file="$(mktemp)"
  zb create instance zbctl-order "$@" >"$result_file" &
  result_pid=$!
  for _ in $(seq 1 20); do
    run activate jobs zbctl-pack --requestTimeout 1s
    job="$(field key)"
    if [ -n "$job" ]; then break; fi
  done
  if [ -n "$job" ]; then run complete job "$job" --variables '{"weight": 7}'; fi
  wait "$result_pid" || true
  out="$(tr -s ' ' <"$result_file")"
  rm -f "$result_file"
}
with_result --variables '{"n": 3}' --withResult
has "create instance --withResult: the variables the job completed with" \
  '"bpmnProcessId": "zbctl-order"' '\"weight\":7' '\"n\":3'
with_result --variables '{"n": 4}' --withResult=weight
has "create instance --withResult=weight: only that variable" '"variables": "{\"weight\":7}"'

# Numbers: 300 random doubles and large integers through create, activate, complete and the
# result, read from zbctl's output as Python floats and ints (numbers.py).
numbers="$(python3 numbers.py make)"
result_file="$(mktemp)"
"$zbctl" --insecure --address "$BEELINE_ADDRESS" --requestTimeout 20s create instance zbctl-order \
  --variables "$numbers" --withResult >"$result_file" 2>&1 &
result_pid=$!
job=
for _ in $(seq 1 20); do
  activated="$(zb activate jobs zbctl-pack --requestTimeout 1s)"
  job="$(grep -o '"key": *"\?[0-9]*' <<<"$activated" | head -1 | grep -o '[0-9]*$' || true)"
  if [ -n "$job" ]; then break; fi
done
if [ -n "$job" ]; then
  run complete job "$job" --variables "$(python3 numbers.py back <<<"$activated")"
fi
wait "$result_pid" || true
if why="$(printf '%s\n----\n%s' "$activated" "$(cat "$result_file")" \
  | python3 numbers.py check "$numbers" 2>&1)"; then
  echo "ok    variables: 300 random doubles and large integers come back exactly (create, job, complete, result)"
else
  echo "FAIL  variables: random doubles and large integers: $why"
  failures=$((failures + 1))
fi
rm -f "$result_file"

# Signals and decisions.
run broadcast signal zbctl-restock --variables '{"sku": "A-1"}'
has "broadcast signal" '"key":'
run activate jobs zbctl-restock
has "broadcast signal: started the restock process" '"bpmnProcessId": "zbctl-restock"' \
  '\"sku\":\"A-1\"'
run evaluate decision zbctl-discount --variables '{"tier": "gold", "total": 150}'
has "evaluate decision: by id" '"decisionOutput": "15"' '"ruleId": "gold-large"'
decision_key="$(field decisionKey)"
expect "evaluate decision: by key" '"decisionOutput": "10"' evaluate decision "${decision_key:-0}" \
  --variables '{"tier": "gold", "total": 20}'
expect "evaluate decision: an unknown decision is NOT_FOUND" "NotFound" evaluate decision \
  zbctl-no-such-decision

finish "zbctl"
