"""pyzeebe 4.x against a running Beeline node: every RPC pyzeebe's public API offers.

Run by run.sh (which starts the node and sets BEELINE_ADDRESS). Prints "ok    <check>" or
"FAIL  <check>: <why>" per check and exits non-zero if any check failed.

pyzeebe's public API (ZeebeClient, ZeebeWorker, JobController) has no call for SetVariables,
UpdateJobRetries, UpdateJobTimeout (only its internal adapter has it), ResolveIncident,
ModifyProcessInstance, MigrateProcessInstance or DeleteResource, and no way to read incidents;
those are checked by the Node SDK suite (compat/node) instead.

Note: no `from __future__ import annotations` here. pyzeebe recognises the `job: Job`
parameter of a task by comparing annotations with the class, which string annotations break.
"""

import asyncio
import logging
import math
import os
import random
import struct
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import grpc
from pyzeebe import (
    Job,
    JobController,
    ZeebeClient,
    ZeebeWorker,
    create_insecure_channel,
    errors,
)

MODELS = Path(__file__).resolve().parent.parent / "models"  # shared with compat/node
ADDRESS = os.environ["BEELINE_ADDRESS"]
PARTITIONS = int(os.environ.get("BEELINE_PARTITIONS", "2"))

failures: list[str] = []


class Mismatch(Exception):
    """A check saw something other than what Zeebe answers."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Mismatch(message)


def expect_eq(actual: Any, wanted: Any, what: str) -> None:
    if actual != wanted:
        raise Mismatch(f"{what}: expected {wanted!r}, got {actual!r}")


async def expect_raises(error_type: type, call: Awaitable[Any], what: str) -> BaseException:
    try:
        result = await call
    except error_type as error:  # the client's own mapping of the status code
        return error
    except Exception as error:
        raise Mismatch(f"{what}: expected {error_type.__name__}, got {describe(error)}") from error
    raise Mismatch(f"{what}: expected {error_type.__name__}, but the call succeeded: {result!r}")


def grpc_code(error: BaseException) -> grpc.StatusCode | None:
    """The gRPC status code behind a pyzeebe error (its cause, or ZeebeError.grpc_error)."""
    if isinstance(error, errors.ZeebeError):
        return error.grpc_error.code()
    cause = error.__cause__
    if isinstance(cause, grpc.aio.AioRpcError):
        return cause.code()
    return None


def describe(error: BaseException) -> str:
    cause = error.__cause__
    if isinstance(cause, grpc.aio.AioRpcError):
        return f"{type(error).__name__} ({cause.code().name}: {cause.details()})"
    return f"{type(error).__name__}: {error}"


async def check(name: str, body: Callable[[], Awaitable[None]], timeout: float = 30) -> None:
    try:
        await asyncio.wait_for(body(), timeout)
    except asyncio.TimeoutError:
        failures.append(name)
        print(f"FAIL  {name}: no result within {timeout:.0f} s", flush=True)
    except Mismatch as error:
        failures.append(name)
        print(f"FAIL  {name}: {error}", flush=True)
    except Exception as error:
        failures.append(name)
        print(f"FAIL  {name}: unexpected {describe(error)}", flush=True)
    else:
        print(f"ok    {name}", flush=True)


class Seen:
    """What the job handlers saw: jobs per type and when they arrived."""

    def __init__(self) -> None:
        self.jobs: dict[str, list[tuple[float, Job]]] = {}
        self.arrived = asyncio.Event()

    def add(self, job: Job) -> None:
        self.jobs.setdefault(job.type, []).append((time.monotonic(), job))
        self.arrived.set()

    def of(self, job_type: str) -> list[tuple[float, Job]]:
        return self.jobs.get(job_type, [])


class StreamErrors(logging.Handler):
    """Collects the warnings pyzeebe's pollers log when an RPC fails (they retry silently)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


async def main() -> int:
    seen = Seen()
    poller_warnings = StreamErrors()
    logging.getLogger("pyzeebe.worker").addHandler(poller_warnings)
    # pyzeebe's default exception handler warns about every job it fails; those are expected.
    logging.getLogger("pyzeebe.task").setLevel(logging.ERROR)

    client = ZeebeClient(create_insecure_channel(ADDRESS))

    # ---- cluster ---------------------------------------------------------------------------
    async def topology() -> None:
        top = await client.topology()
        expect_eq(top.cluster_size, 1, "cluster size")
        expect_eq(top.partitions_count, PARTITIONS, "partitions count")
        expect_eq(top.replication_factor, 1, "replication factor")
        expect_eq(len(top.brokers), 1, "brokers")
        broker = top.brokers[0]
        expect(broker.port > 0 and broker.host != "", f"broker address: {broker}")
        expect(top.gateway_version != "", "gateway version is empty")
        ids = sorted(p.partition_id for p in broker.partitions)
        expect_eq(ids, list(range(1, PARTITIONS + 1)), "partition ids")
        for p in broker.partitions:
            expect_eq(p.role.name, "LEADER", f"partition {p.partition_id} role")
            expect_eq(p.health.name, "HEALTHY", f"partition {p.partition_id} health")

    await check("topology: one broker leading every partition, healthy", topology)

    async def healthcheck() -> None:
        # grpc.health.v1.Health/Check for service "gateway_protocol.Gateway", as Zeebe's gateway
        # serves it.
        response = await client.healthcheck()
        expect_eq(response.status, 1, "health status (1 = SERVING)")

    await check("healthcheck: grpc.health.v1 answers SERVING", healthcheck)

    # ---- deployment ------------------------------------------------------------------------
    deployed: dict[str, Any] = {}

    async def deploy() -> None:
        response = await client.deploy_resource(
            MODELS / "task.bpmn",
            MODELS / "error.bpmn",
            MODELS / "message.bpmn",
            MODELS / "signal.bpmn",
            MODELS / "discount.dmn",
        )
        expect(response.key > 0, f"deployment key {response.key}")
        for d in response.deployments:
            name = getattr(d, "bpmn_process_id", None) or getattr(d, "dmn_decision_id", None)
            if name is None:
                name = "drg:" + d.dmn_decision_requirements_id
            deployed[name] = d
        for process, resource in [
            ("compat-task", "task.bpmn"),
            ("compat-error", "error.bpmn"),
            ("compat-message", "message.bpmn"),
            ("compat-signal", "signal.bpmn"),
        ]:
            expect(process in deployed, f"no process {process} in {response.deployments}")
            expect_eq(deployed[process].version, 1, f"{process} version")
            expect_eq(deployed[process].resource_name, resource, f"{process} resource name")
            expect(deployed[process].process_definition_key > 0, f"{process} key")
            expect_eq(deployed[process].tenant_id, "<default>", f"{process} tenant")
        expect("compat-discount" in deployed, f"no decision in {response.deployments}")
        decision = deployed["compat-discount"]
        expect_eq(decision.dmn_decision_name, "Discount", "decision name")
        expect_eq(decision.dmn_decision_requirements_id, "compat-discounts", "decision DRG id")
        expect("drg:compat-discounts" in deployed, "no decision requirements in the deployment")
        drg = deployed["drg:compat-discounts"]
        expect_eq(drg.decision_requirements_key, decision.decision_requirements_key, "DRG key")
        expect_eq(drg.resource_name, "discount.dmn", "DRG resource name")

    await check("deploy: four processes and a DMN in one deployment", deploy)
    if "compat-task" not in deployed:
        print("FAIL  nothing else can run without the deployment", flush=True)
        return 1

    async def redeploy() -> None:
        response = await client.deploy_resource(MODELS / "task.bpmn")
        again = response.deployments[0]
        expect_eq(again.version, 1, "version of an unchanged redeployment")
        expect_eq(
            again.process_definition_key,
            deployed["compat-task"].process_definition_key,
            "key of an unchanged redeployment",
        )

    await check("deploy: an unchanged resource keeps its version and key", redeploy)

    async def deploy_broken() -> None:
        error = await expect_raises(
            errors.ProcessInvalidError,
            client.deploy_resource(MODELS / "broken.bpmn"),
            "deploying a flow to a missing element",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.INVALID_ARGUMENT, "status code")

    await check("deploy: an invalid BPMN is INVALID_ARGUMENT (ProcessInvalidError)", deploy_broken)

    # ---- instances -------------------------------------------------------------------------
    async def create() -> None:
        created = await client.run_process("compat-message", {"orderId": "never-paid"})
        expect(created.process_instance_key > 0, f"instance key {created}")
        expect_eq(created.bpmn_process_id, "compat-message", "process id")
        expect_eq(created.version, 1, "version")
        expect_eq(
            created.process_definition_key,
            deployed["compat-message"].process_definition_key,
            "process definition key",
        )
        expect_eq(created.tenant_id, "<default>", "tenant")

    await check("create instance: latest version by process id", create)

    async def create_round_robin() -> None:
        partitions = set()
        for _ in range(2 * PARTITIONS):
            created = await client.run_process("compat-message", {"orderId": "never-paid"})
            partitions.add(created.process_instance_key >> 51)
        expect_eq(sorted(partitions), list(range(1, PARTITIONS + 1)), "partitions of the keys")

    await check("create instance: instances spread over every partition", create_round_robin)

    async def create_unknown() -> None:
        error = await expect_raises(
            errors.ProcessDefinitionNotFoundError,
            client.run_process("no-such-process"),
            "creating an instance of an unknown process",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.NOT_FOUND, "status code")

    await check("create instance: unknown process is NOT_FOUND", create_unknown)

    async def create_unknown_version() -> None:
        await expect_raises(
            errors.ProcessDefinitionNotFoundError,
            client.run_process("compat-task", {"jobType": "x", "retries": 1}, version=7),
            "creating an instance of a version never deployed",
        )

    await check("create instance: unknown version is NOT_FOUND", create_unknown_version)

    async def create_invalid_variables() -> None:
        # Variables must be a JSON object; pyzeebe maps INVALID_ARGUMENT to InvalidJSONError.
        error = await expect_raises(
            errors.InvalidJSONError,
            client.run_process("compat-task", [1, 2, 3]),  # type: ignore[arg-type]
            "variables that are a JSON array",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.INVALID_ARGUMENT, "status code")

    await check("create instance: non-object variables are INVALID_ARGUMENT", create_invalid_variables)

    async def cancel() -> None:
        created = await client.run_process("compat-message", {"orderId": "cancelled"})
        await client.cancel_process_instance(created.process_instance_key)
        error = await expect_raises(
            errors.ProcessInstanceNotFoundError,
            client.cancel_process_instance(created.process_instance_key),
            "cancelling the same instance again",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.NOT_FOUND, "status code")

    await check("cancel instance; cancelling it again is NOT_FOUND", cancel)

    async def result_timeout() -> None:
        error = await expect_raises(
            errors.ProcessTimeoutError,
            client.run_process_with_result("compat-message", {"orderId": "late"}, timeout=1000),
            "waiting 1 s for an instance that waits for a message",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.DEADLINE_EXCEEDED, "status code")

    await check("create with result: DEADLINE_EXCEEDED after its request timeout", result_timeout)

    # ---- workers ---------------------------------------------------------------------------
    poller = ZeebeWorker(create_insecure_channel(ADDRESS), name="py-poller", request_timeout=5000)
    streamer = ZeebeWorker(
        create_insecure_channel(ADDRESS), name="py-streamer", stream_enabled=True, request_timeout=5000
    )

    @poller.task(task_type="py-complete")
    async def complete(job: Job, x: int) -> dict:
        seen.add(job)
        return {"doubled": x * 2, "note": "done by pyzeebe"}

    @streamer.task(task_type="py-stream")
    async def streamed(job: Job, x: int) -> dict:
        seen.add(job)
        return {"streamed": x + 1}

    async def fail_with_back_off(error: Exception, job: Job, controller: JobController) -> None:
        await controller.set_failure_status(f"attempt failed: {error}", retry_back_off_ms=1500)

    @poller.task(task_type="py-retry", exception_handler=fail_with_back_off)
    async def flaky(job: Job) -> dict:
        seen.add(job)
        if len(seen.of("py-retry")) == 1:
            raise RuntimeError("first attempt fails")
        return {"attempts": len(seen.of("py-retry"))}

    @poller.task(task_type="py-incident")
    async def always_fails(job: Job) -> dict:
        seen.add(job)
        raise RuntimeError("this job always fails")  # default handler: FailJob, retries - 1

    async def throw_e42(error: Exception, job: Job, controller: JobController) -> None:
        await controller.set_error_status("out of stock", error_code="E42", variables={"reason": "stock"})

    @poller.task(task_type="py-error", exception_handler=throw_e42)
    async def business_failure(job: Job) -> dict:
        seen.add(job)
        raise errors.BusinessError("E42")

    @poller.task(task_type="py-error-handled")
    async def handle_error(job: Job) -> dict:
        seen.add(job)
        return {"handled": True}

    @poller.task(task_type="py-uncaught", exception_handler=throw_e42)
    async def uncaught(job: Job) -> dict:
        # compat-task has no boundary event: the thrown error becomes an incident.
        seen.add(job)
        raise errors.BusinessError("E42")

    @poller.task(task_type="py-numbers")
    async def echo_numbers(job: Job, doubles: list, ints: list) -> dict:
        seen.add(job)
        return {"doublesBack": doubles, "intsBack": ints}

    workers = [asyncio.create_task(poller.work()), asyncio.create_task(streamer.work())]

    async def worker_poll() -> None:
        result = await client.run_process_with_result(
            "compat-task", {"jobType": "py-complete", "retries": 3, "x": 21}
        )
        expect_eq(result.variables.get("doubled"), 42, "variable the worker completed with")
        expect_eq(result.variables.get("note"), "done by pyzeebe", "string variable")
        expect_eq(result.bpmn_process_id, "compat-task", "process id of the result")
        [(_, job)] = seen.of("py-complete")
        expect_eq(job.process_instance_key, result.process_instance_key, "job's instance key")
        expect_eq(job.bpmn_process_id, "compat-task", "job's process id")
        expect_eq(job.element_id, "work", "job's element id")
        expect_eq(job.retries, 3, "job's retries (from the expression)")
        expect_eq(job.worker, "py-poller", "job's worker")
        expect_eq(dict(job.custom_headers), {"suite": "compat"}, "job's custom headers")
        # pyzeebe fetches the variables the task function names (x), and only those.
        expect_eq(dict(job.variables), {"x": 21}, "job's variables")
        expect_eq(
            job.process_definition_key,
            deployed["compat-task"].process_definition_key,
            "job's process definition key",
        )
        expect_eq(job.process_definition_version, 1, "job's process definition version")
        expect_eq(job.tenant_id, "<default>", "job's tenant")
        expect(job.deadline > time.time() * 1000, f"job deadline {job.deadline} is in the past")

    await check("worker (polling) completes a job; create with result returns its variables", worker_poll)

    async def random_numbers() -> None:
        # 200 random doubles in [0, 1) (ids, amounts), 100 of any exponent (random bit
        # patterns), and integers beyond 2^53 up to the 64-bit limits, through create, job
        # activation, completion and the instance's result; compared as Python's float (bit
        # for bit, so -0.0 and 0.0 differ) and int.
        seed = time.time_ns()
        rng = random.Random(seed)
        doubles = [rng.random() for _ in range(200)]
        while len(doubles) < 300:
            (d,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
            if math.isfinite(d):
                doubles.append(d)
        ints = [2**63 - 1, -(2**63), 2**53 + 1, -(2**53 + 1), 2**64 - 1, rng.getrandbits(63)]

        def same(what: str, got: Any, want_doubles: list, want_ints: list) -> None:
            doubles_back, ints_back = got
            expect(isinstance(doubles_back, list), f"{what}: doubles are {doubles_back!r} (seed {seed})")
            expect_eq(len(doubles_back), len(want_doubles), f"{what}: count of doubles (seed {seed})")
            for i, (back, sent) in enumerate(zip(doubles_back, want_doubles)):
                expect(
                    isinstance(back, float) and back.hex() == sent.hex(),
                    f"{what}: double {i} went in as {sent!r} and came back as {back!r} (seed {seed})",
                )
            expect_eq(ints_back, want_ints, f"{what}: integers (seed {seed})")

        result = await client.run_process_with_result(
            "compat-task", {"jobType": "py-numbers", "retries": 3, "doubles": doubles, "ints": ints}
        )
        [(_, job)] = seen.of("py-numbers")
        same("the job's variables", (job.variables.get("doubles"), job.variables.get("ints")), doubles, ints)
        same("the instance's result", (result.variables.get("doubles"), result.variables.get("ints")), doubles, ints)
        same(
            "the completed job's variables in the result",
            (result.variables.get("doublesBack"), result.variables.get("intsBack")),
            doubles,
            ints,
        )

    await check(
        "variables: 300 random doubles and large integers come back exactly (create, job, complete, result)",
        random_numbers,
    )

    async def fetch_variables() -> None:
        result = await client.run_process_with_result(
            "compat-task",
            {"jobType": "py-complete", "retries": 3, "x": 5},
            variables_to_fetch=["doubled"],
        )
        expect_eq(result.variables, {"doubled": 10}, "only the fetched variable")

    await check("create with result: fetchVariables limits the result", fetch_variables)

    async def worker_stream() -> None:
        # pyzeebe streams (StreamActivatedJobs) and still polls next to it; a failing stream
        # only logs a warning, so the check also requires that nothing was logged.
        await asyncio.sleep(0.5)  # let the stream open
        result = await client.run_process_with_result(
            "compat-task", {"jobType": "py-stream", "retries": 3, "x": 1}
        )
        expect_eq(result.variables.get("streamed"), 2, "variable the streaming worker set")
        expect_eq(poller_warnings.messages, [], "warnings from pyzeebe's pollers and streams")

    await check("worker (stream enabled) completes a job", worker_stream)

    async def retry_back_off() -> None:
        result = await client.run_process_with_result(
            "compat-task", {"jobType": "py-retry", "retries": 3}, timeout=20000
        )
        expect_eq(result.variables.get("attempts"), 2, "attempts")
        (first_at, first), (second_at, second) = seen.of("py-retry")
        expect_eq(first.key, second.key, "the retried job's key")
        expect_eq(first.retries, 3, "retries of the first attempt")
        expect_eq(second.retries, 2, "retries after one failure")
        gap = second_at - first_at
        expect(gap >= 1.4, f"the job came back after {gap:.2f} s, before its 1.5 s back-off")

    await check("fail with retries and back-off: the job comes back after the back-off", retry_back_off)

    async def incident() -> None:
        created = await client.run_process("compat-task", {"jobType": "py-incident", "retries": 1})
        while not seen.of("py-incident"):
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.5)
        jobs = seen.of("py-incident")
        expect_eq(len(jobs), 1, "activations of a job failed with no retries left")
        expect_eq(jobs[0][1].retries, 1, "retries of the activated job")
        # The instance is still there (stuck at the incident), so cancelling it works.
        await client.cancel_process_instance(created.process_instance_key)

    await check("fail to 0 retries: an incident, the job is not activated again", incident)

    async def throw_error() -> None:
        result = await client.run_process_with_result("compat-error", {"jobType": "py-error"})
        expect_eq(result.variables.get("handled"), True, "the error path ran")
        expect_eq(result.variables.get("reason"), "stock", "variable thrown with the error")
        expect_eq(len(seen.of("py-error")), 1, "activations of the failing job")

    await check("throw error: caught by the error boundary event, with its variables", throw_error)

    async def uncaught_error() -> None:
        created = await client.run_process("compat-task", {"jobType": "py-uncaught", "retries": 3})
        while not seen.of("py-uncaught"):
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)
        expect_eq(len(seen.of("py-uncaught")), 1, "activations of the job")
        await client.cancel_process_instance(created.process_instance_key)

    await check("throw error with no catch event: an incident, the instance stays", uncaught_error)

    # ---- messages and signals --------------------------------------------------------------
    async def message() -> None:
        waiting = asyncio.create_task(
            client.run_process_with_result("compat-message", {"orderId": "order-py-1"})
        )
        await asyncio.sleep(0.3)
        published = await client.publish_message(
            "compat-paid", "order-py-1", {"paid": 100}, time_to_live_in_milliseconds=60000,
            message_id="payment-py-1",
        )
        expect(published.key > 0, f"message key {published.key}")
        expect_eq(published.tenant_id, "<default>", "message tenant")
        result = await waiting
        expect_eq(result.variables.get("paid"), 100, "message variable in the instance")
        error = await expect_raises(
            errors.MessageAlreadyExistsError,
            client.publish_message("compat-paid", "order-py-1", message_id="payment-py-1"),
            "publishing the same message id again",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.ALREADY_EXISTS, "status code")

    await check("publish message: correlated to a waiting instance; duplicate id ALREADY_EXISTS", message)

    async def buffered_message() -> None:
        await client.publish_message(
            "compat-paid", "order-py-2", {"paid": 7}, time_to_live_in_milliseconds=60000
        )
        result = await client.run_process_with_result("compat-message", {"orderId": "order-py-2"})
        expect_eq(result.variables.get("paid"), 7, "variable of the buffered message")

    await check("publish message: buffered with a TTL, correlated to a later instance", buffered_message)

    async def non_ascii_keys() -> None:
        # The gateway routes a message by a hash of its correlation key's UTF-8 bytes; the
        # instance's subscription must find it on that partition.
        for key in ["Bestellung-ä-1", "注文-2", "zamówienie-ś-3"]:
            await client.publish_message(
                "compat-paid", key, {"paidFor": key}, time_to_live_in_milliseconds=60000
            )
            result = await client.run_process_with_result("compat-message", {"orderId": key})
            expect_eq(result.variables.get("paidFor"), key, f"message correlated by {key}")

    await check("publish message: non-ASCII correlation keys correlate", non_ascii_keys)

    async def message_without_name() -> None:
        error = await expect_raises(
            errors.ZeebeError,
            client.publish_message("", "order-py-3"),
            "publishing a message without a name",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.INVALID_ARGUMENT, "status code")

    await check("publish message: no name is INVALID_ARGUMENT", message_without_name)

    async def signal() -> None:
        waiting = asyncio.create_task(client.run_process_with_result("compat-signal", {}))
        # Signals are not buffered: broadcast until the waiting instance has caught one.
        while not waiting.done():
            broadcast = await client.broadcast_signal("compat-go", {"signalled": "yes"})
            expect(broadcast.key > 0, f"signal key {broadcast.key}")
            expect_eq(broadcast.tenant_id, "<default>", "signal tenant")
            await asyncio.wait([waiting], timeout=0.3)
        result = waiting.result()
        expect_eq(result.variables.get("signalled"), "yes", "signal variable in the instance")

    await check("broadcast signal: caught by a waiting instance, with its variables", signal)

    # ---- decisions -------------------------------------------------------------------------
    async def decision() -> None:
        evaluated = await client.evaluate_decision(None, "compat-discount", {"tier": "gold"})
        expect_eq(evaluated.decision_output, 0.2, "output for gold")
        expect_eq(evaluated.decision_id, "compat-discount", "decision id")
        expect_eq(evaluated.decision_version, 1, "decision version")
        expect_eq(evaluated.decision_key, deployed["compat-discount"].decision_key, "decision key")
        expect_eq(evaluated.failed_decision_id, "", "failed decision id")
        [inner] = evaluated.evaluated_decisions
        expect_eq([r.rule_id for r in inner.matched_rules], ["gold"], "matched rules")
        expect_eq(inner.evaluated_inputs[0].input_value, "gold", "evaluated input")
        by_key = await client.evaluate_decision(
            deployed["compat-discount"].decision_key, None, {"tier": "bronze"}
        )
        expect_eq(by_key.decision_output, 0, "output for bronze (by key)")

    await check("evaluate decision: by id and by key", decision)

    async def decision_unknown() -> None:
        error = await expect_raises(
            errors.DecisionNotFoundError,
            client.evaluate_decision(None, "no-such-decision", {}),
            "evaluating an unknown decision",
        )
        expect_eq(grpc_code(error), grpc.StatusCode.NOT_FOUND, "status code")

    await check("evaluate decision: unknown decision is NOT_FOUND", decision_unknown)

    # ---- shutdown of the workers -----------------------------------------------------------
    async def stop_workers() -> None:
        await poller.stop()
        await streamer.stop()
        for worker in workers:
            await worker  # a worker that died with an error raises it here

    await check("workers stop cleanly", stop_workers, timeout=20)

    if failures:
        print(f"{len(failures)} pyzeebe check(s) failed", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
