"""pyzeebe over TLS: a secure channel trusting the test's CA reaches the node; one trusting
nothing else (the system's roots) and an insecure one do not."""

import asyncio
import os
import sys

import grpc
from pyzeebe import ZeebeClient, create_insecure_channel, create_secure_channel

ADDRESS = os.environ["BEELINE_TLS_ADDRESS"]
CA = os.environ["BEELINE_CA"]
MODEL = os.environ["BEELINE_MODEL"]

failures = 0


def report(ok: bool, what: str, detail: str = "") -> None:
    global failures
    if ok:
        print(f"ok    pyzeebe: {what}")
    else:
        failures += 1
        print(f"FAIL  pyzeebe: {what} {detail}")


async def main() -> None:
    with open(CA, "rb") as f:
        credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    client = ZeebeClient(create_secure_channel(grpc_address=ADDRESS, channel_credentials=credentials))
    topology = await client.topology()
    report(topology.cluster_size == 1, "topology over TLS", str(topology))
    deployed = await client.deploy_resource(MODEL)
    deployment = deployed.deployments[0]
    report(deployment.bpmn_process_id == "compat-task", "deploy over TLS", str(deployed))
    created = await client.run_process("compat-task", {"jobType": "tls", "retries": 1})
    report(created.process_instance_key > 0, "create an instance over TLS", str(created))

    for what, channel in [
        ("a channel that does not trust the CA", create_secure_channel(grpc_address=ADDRESS)),
        ("a plaintext channel", create_insecure_channel(grpc_address=ADDRESS)),
    ]:
        try:
            await asyncio.wait_for(ZeebeClient(channel).topology(), 20)
            report(False, f"{what} is refused", "(it was answered)")
        except Exception as error:  # the client's own error type
            report(True, f"{what} is refused ({type(error).__name__})")


asyncio.run(main())
sys.exit(1 if failures else 0)
