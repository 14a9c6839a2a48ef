#!/usr/bin/env bash
# Authentication with the official clients: an OAuth token endpoint that this suite serves
# (token_server.py: client credentials grant, RS256 JWTs, its JWKS) and a `beeline broker` that
# checks bearer tokens against that JWKS (--auth-oidc-jwks, --auth-oidc-audience zeebe-api),
# over TLS. zbctl 8.4 (the Go client's OAuth provider, ZEEBE_CLIENT_ID/...) and pyzeebe's OAuth
# channel get their tokens there and are served; without credentials, or with a wrong secret,
# nothing is.
#
#   compat/auth/run.sh                      # builds the release binary first
#   BEELINE_BIN=path/to/beeline compat/auth/run.sh
set -euo pipefail
cd "$(dirname "$0")"

source ../lib.sh
install_zbctl
install_pyzeebe

work="$(mktemp -d)"
make_certificates "$work"
idp_port=26680
python3 token_server.py "$idp_port" "$work" compat-worker compat-secret &
idp_pid=$!
stop_idp() { kill "$idp_pid" 2>/dev/null || true; rm -rf "$work"; }
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$idp_port/jwks.json" >/dev/null && break
  sleep 0.1
done

start_beeline 26607 --tls-certificate "$work/server.pem" --tls-private-key "$work/server.key" \
  --auth-oidc-jwks "http://127.0.0.1:$idp_port/jwks.json" \
  --auth-oidc-issuer "http://127.0.0.1:$idp_port" --auth-oidc-audience zeebe-api
trap 'stop_beeline; stop_idp' EXIT
address="localhost:${BEELINE_ADDRESS##*:}"

failures=0
check() {
  local what="$1" want="$2" got="$3"
  if grep -qF -- "$want" <<<"$got"; then
    echo "ok    $what"
  else
    echo "FAIL  $what: expected '$want' in:"
    sed 's/^/        /' <<<"$got"
    failures=$((failures + 1))
  fi
}

zb() {
  "$zbctl" --address "$address" \
    --certPath "$work/ca.pem" --requestTimeout 10s "$@" 2>&1 || true
}
# oauth <secret> <zbctl args...>: zbctl with OAuth client credentials; its token cache (under
# $HOME) is one per secret.
oauth() {
  mkdir -p "$work/home-$1"
  HOME="$work/home-$1" ZEEBE_CLIENT_ID=compat-worker ZEEBE_CLIENT_SECRET="$1" ZEEBE_TOKEN_AUDIENCE=zeebe-api \
    ZEEBE_AUTHORIZATION_SERVER_URL="http://127.0.0.1:$idp_port/token" zb "${@:2}"
}
check "zbctl without credentials is UNAUTHENTICATED" "Unauthenticated" "$(zb status)"
check "zbctl with its OAuth client credentials: status" "Partition 1 : Leader, Healthy" \
  "$(oauth compat-secret status)"
check "zbctl with OAuth: deploy" '"compat-task"' \
  "$(oauth compat-secret deploy resource ../models/task.bpmn)"
check "zbctl with a wrong client secret gets no token" "invalid_client" \
  "$(oauth wrong-secret status)"

BEELINE_TLS_ADDRESS="$address" BEELINE_CA="$work/ca.pem" \
  BEELINE_TOKEN_URL="http://127.0.0.1:$idp_port/token" OAUTHLIB_INSECURE_TRANSPORT=1 \
  "$venv/bin/python" check.py || failures=$((failures + 1))

finish "authentication"
