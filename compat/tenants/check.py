"""pyzeebe 4.7 with tenants: alice (tenant-a) and bob (tenant-b), each on a channel carrying
its basic credentials, deploy the same process id, start instances with the same correlation
key and work their jobs with a worker for their tenant; a message alice publishes reaches her
instance only (seen through the REST search, which shows each user its own tenant)."""

import asyncio
import base64
import json
import os
import sys
import tempfile
import time
import urllib.request

import grpc
from pyzeebe import Job, ZeebeClient, ZeebeWorker

ADDRESS = os.environ["BEELINE_ADDRESS"]
REST = os.environ["BEELINE_REST"]
PROCESS = "py-tenant-order"
BPMN = f"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="m" name="{PROCESS}-payment"><bpmn:extensionElements><zeebe:subscription correlationKey="=orderId"/></bpmn:extensionElements></bpmn:message>
  <bpmn:process id="{PROCESS}" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="pack"/>
    <bpmn:serviceTask id="pack"><bpmn:extensionElements><zeebe:taskDefinition type="{PROCESS}-pack"/></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="pack" targetRef="paid"/>
    <bpmn:intermediateCatchEvent id="paid"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f3" sourceRef="paid" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"""

failures = 0


def report(ok: bool, what: str, detail: object = "") -> None:
    global failures
    print(f"{'ok   ' if ok else 'FAIL '} pyzeebe: {what} {'' if ok else detail}")
    failures += 0 if ok else 1


def basic(user: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{user}-pw".encode()).decode()


class Credentials(grpc.AuthMetadataPlugin):
    """The user's basic credentials on every call, as a gateway with authentication wants."""

    def __init__(self, user: str) -> None:
        self.value = basic(user)

    def __call__(self, context, callback) -> None:
        callback((("authorization", self.value),), None)


def channel(user: str) -> grpc.aio.Channel:
    # Local credentials: plaintext to 127.0.0.1, yet call credentials may ride along.
    credentials = grpc.composite_channel_credentials(
        grpc.local_channel_credentials(grpc.LocalConnectionType.LOCAL_TCP),
        grpc.metadata_call_credentials(Credentials(user)),
    )
    return grpc.aio.secure_channel(ADDRESS, credentials)


def search(user: str) -> list:
    request = urllib.request.Request(
        f"{REST}/v2/process-instances/search",
        data=json.dumps({"filter": {"processDefinitionId": PROCESS}}).encode(),
        headers={"Content-Type": "application/json", "Authorization": basic(user)},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["items"]


async def work_one(user: str, tenant: str) -> list:
    """Runs a worker for the user's tenant until it has handled a job: the jobs it saw."""
    seen = []
    worker = ZeebeWorker(channel(user), tenant_ids=[tenant], poll_retry_delay=0)

    @worker.task(task_type=f"{PROCESS}-pack")
    async def pack(job: Job) -> dict:
        seen.append((job.tenant_id, job.process_instance_key))
        return {}

    task = asyncio.create_task(worker.work())
    deadline = time.monotonic() + 20
    while not seen and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    # Long enough for a job of the other tenant to show up if one could.
    await asyncio.sleep(1)
    await worker.stop()
    task.cancel()
    return seen


async def main() -> None:
    alice, bob = ZeebeClient(channel("alice")), ZeebeClient(channel("bob"))
    with tempfile.NamedTemporaryFile("w", suffix=".bpmn", delete=False) as f:
        f.write(BPMN)
    in_a = await alice.deploy_resource(f.name, tenant_id="tenant-a")
    in_b = await bob.deploy_resource(f.name, tenant_id="tenant-b")
    versions = [(d.tenant_id, d.deployments[0].version) for d in (in_a, in_b)]
    report(versions == [("tenant-a", 1), ("tenant-b", 1)], "the same process id deploys in both tenants", versions)
    try:
        await alice.deploy_resource(f.name, tenant_id="tenant-b")
        report(False, "alice may not deploy in tenant-b", "(it was deployed)")
    except Exception as error:
        text = f"{type(error).__name__}: {error}"
        report("not authorized" in text, "alice may not deploy in tenant-b", text)

    started = {}
    for user, client, tenant in (("alice", alice, "tenant-a"), ("bob", bob, "tenant-b")):
        for _ in range(50):
            try:
                created = await client.run_process(PROCESS, {"orderId": "o-1"}, tenant_id=tenant)
                started[user] = created.process_instance_key
                break
            except Exception:
                await asyncio.sleep(0.1)  # the deployment may still be on its way
    report(len(started) == 2, "each starts an instance in its tenant", started)

    for user, tenant in (("alice", "tenant-a"), ("bob", "tenant-b")):
        seen = await work_one(user, tenant)
        report(seen == [(tenant, started.get(user))], f"{user}'s worker gets its tenant's job only", seen)

    await alice.publish_message(f"{PROCESS}-payment", "o-1", time_to_live_in_milliseconds=60_000, tenant_id="tenant-a")
    deadline = time.monotonic() + 20
    states = {}
    while time.monotonic() < deadline:
        states = {user: [(i["tenantId"], i["state"]) for i in search(user)] for user in ("alice", "bob")}
        if states["alice"] == [("tenant-a", "COMPLETED")] and states["bob"] == [("tenant-b", "ACTIVE")]:
            break
        await asyncio.sleep(0.2)
    report(
        states == {"alice": [("tenant-a", "COMPLETED")], "bob": [("tenant-b", "ACTIVE")]},
        "alice's message completes her instance only; each search shows its own tenant",
        states,
    )


asyncio.run(main())
sys.exit(1 if failures else 0)
