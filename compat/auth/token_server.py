"""The identity provider of the authentication suite: an OAuth 2.0 token endpoint (client
credentials grant, as Camunda's clients use it) that issues RS256 JWTs, and the JWKS of its key.
Python's standard library and the openssl command only.

    python3 token_server.py <port> <work dir> <client id> <client secret> [<cert> <key>]

With a certificate and its key it serves the same over HTTPS on <port> + 1 too (the broker can
read the JWKS there; the tokens' issuer stays the http:// one).

POST /token        client_id, client_secret, audience (form): {"access_token": <JWT>, ...}
GET  /jwks.json    the key set the broker checks tokens against
"""

import base64
import json
import subprocess
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PORT, WORK, CLIENT_ID, CLIENT_SECRET = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
KEY = WORK / "idp.pem"
KID = "compat-key"
ISSUER = f"http://127.0.0.1:{PORT}"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


subprocess.run(["openssl", "genrsa", "-out", str(KEY), "2048"], check=True, capture_output=True)
modulus = subprocess.run(
    ["openssl", "rsa", "-in", str(KEY), "-noout", "-modulus"], check=True, capture_output=True
).stdout.decode().strip().split("=", 1)[1]
JWKS = {"keys": [{"kty": "RSA", "kid": KID, "alg": "RS256", "use": "sig",
                  "n": b64url(bytes.fromhex(modulus)), "e": "AQAB"}]}


def sign(claims: dict) -> str:
    header = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": KID}).encode())
    payload = b64url(json.dumps(claims).encode())
    signing_input = f"{header}.{payload}".encode()
    signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", str(KEY)],
                               input=signing_input, check=True, capture_output=True).stdout
    return f"{header}.{payload}.{b64url(signature)}"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/jwks.json":
            self.answer(200, JWKS)
        else:
            self.answer(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        field = lambda name: (form.get(name) or [""])[0]
        client_id, client_secret = field("client_id"), field("client_secret")
        authorization = self.headers.get("Authorization", "")
        if authorization.startswith("Basic "):
            client_id, _, client_secret = base64.b64decode(authorization[6:]).decode().partition(":")
        if self.path != "/token" or field("grant_type") not in ("client_credentials", ""):
            self.answer(400, {"error": "unsupported_grant_type"})
            return
        if (client_id, client_secret) != (CLIENT_ID, CLIENT_SECRET):
            self.answer(401, {"error": "invalid_client"})
            return
        now = int(time.time())
        audience = field("audience") or "zeebe-api"
        token = sign({"iss": ISSUER, "sub": client_id, "aud": audience, "iat": now,
                      "exp": now + 300, "azp": client_id})
        self.answer(200, {"access_token": token, "token_type": "Bearer", "expires_in": 300})


if len(sys.argv) > 6:
    import ssl
    import threading

    https = ThreadingHTTPServer(("127.0.0.1", PORT + 1), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[5], sys.argv[6])
    https.socket = context.wrap_socket(https.socket, server_side=True)
    threading.Thread(target=https.serve_forever, daemon=True).start()
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
