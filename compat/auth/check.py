"""pyzeebe's OAuth channel (client credentials against the suite's token endpoint) over TLS:
served; a channel without credentials: UNAUTHENTICATED."""

import asyncio
import os
import sys

import grpc
from pyzeebe import ZeebeClient, create_oauth2_client_credentials_channel, create_secure_channel

ADDRESS = os.environ["BEELINE_TLS_ADDRESS"]
TOKEN_URL = os.environ["BEELINE_TOKEN_URL"]
with open(os.environ["BEELINE_CA"], "rb") as f:
    CA = f.read()

failures = 0


def report(ok: bool, what: str, detail: str = "") -> None:
    global failures
    print(f"{'ok   ' if ok else 'FAIL '} pyzeebe: {what} {'' if ok else detail}")
    failures += 0 if ok else 1


async def main() -> None:
    channel = create_oauth2_client_credentials_channel(
        grpc_address=ADDRESS,
        client_id="compat-worker",
        client_secret="compat-secret",
        authorization_server=TOKEN_URL,
        audience="zeebe-api",
        channel_credentials=grpc.ssl_channel_credentials(root_certificates=CA),
    )
    topology = await ZeebeClient(channel).topology()
    report(topology.cluster_size == 1, "topology with an OAuth token", str(topology))
    try:
        anonymous = create_secure_channel(
            grpc_address=ADDRESS, channel_credentials=grpc.ssl_channel_credentials(root_certificates=CA)
        )
        await ZeebeClient(anonymous).topology()
        report(False, "a channel without a token is refused", "(it was answered)")
    except Exception as error:
        text = f"{type(error).__name__}: {error}"
        report("UNAUTHENTICATED" in text.upper() or "Unauthenticated" in text, "a channel without a token is refused", text)


asyncio.run(main())
sys.exit(1 if failures else 0)
