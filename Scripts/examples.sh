#!/usr/bin/env bash
# Builds the example apps (Examples/VaporApp, Examples/HummingbirdApp), checks Courier's public names against each
# framework's (Scripts/public-names.py), then runs each app against httpbin on 127.0.0.1 and calls every route with
# `courier`: a decoded JSON GET, a streamed download compared byte for byte with the upstream's, a JSON POST, and a
# refused parameter. Needs httpbin and gunicorn (Scripts/test.sh installs them) and Courier's debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

swift build --product courier >/dev/null 2>&1 || swift build --product courier
courier="$root/.build/debug/courier"
python3 -c "import httpbin, gunicorn" 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check httpbin gunicorn

pids=()
work=$(mktemp -d)
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits until `courier` gets a 2xx from the URL (up to 60 s), or fails showing the log.
wait_for() {
    local url=$1 log=$2
    for _ in $(seq 1 120); do
        if "$courier" --check-status --timeout 2 --print=b "$url" >/dev/null 2>&1; then return 0; fi
        sleep 0.5
    done
    echo "error: $url did not answer; its log:" >&2
    cat "$log" >&2
    exit 1
}

fail() {
    echo "error: $*" >&2
    exit 1
}

upstream_port=$(free_port)
gunicorn --bind "127.0.0.1:$upstream_port" --workers 2 --log-level warning httpbin:app >"$work/httpbin.log" 2>&1 &
pids+=($!)
upstream="http://127.0.0.1:$upstream_port"
wait_for "$upstream/get" "$work/httpbin.log"

# Calls every route of an app listening on `port`.
exercise() {
    local name=$1 port=$2
    local app="http://127.0.0.1:$port"
    local reply
    reply=$("$courier" --check-status --print=b "$app/uuid")
    python3 -c 'import json, sys, uuid; r = json.loads(sys.argv[1]); uuid.UUID(r["uuid"]); assert r["via"] == "courier 200", r' \
        "$reply" || fail "$name GET /uuid answered $reply"

    "$courier" --check-status --print=b "$upstream/range/100000" >"$work/expected"
    "$courier" --check-status --print=b "$app/download/100000" >"$work/streamed"
    cmp -s "$work/expected" "$work/streamed" ||
        fail "$name GET /download/100000: $(wc -c <"$work/streamed") bytes, not the upstream's 100000"

    reply=$("$courier" --check-status --print=b "$app/echo" name=bang count:=3)
    python3 -c 'import json, sys; assert json.loads(sys.argv[1]) == {"name": "bang", "count": 3}' "$reply" ||
        fail "$name POST /echo answered $reply"

    local status
    status=$("$courier" --print=h "$app/download/many" 2>&1 | head -1 || true)
    [[ $status == *" 400 "* ]] || fail "$name GET /download/many: $status, not 400"
    echo "$name: every route answered as expected"
}

# The apps build in Courier's own build directory: what they share with it and with each other (SwiftNIO, NIOSSL's
# BoringSSL, swift-crypto, AsyncHTTPClient, Courier) is already built there, by the tests, the same modules with
# the same flags. Measured on the 2-core machine: VaporApp built in 750 s in a directory of its own, 133 s here;
# HummingbirdApp 601 s alone, 68 s here. Each build makes the directory's plan its app's; Courier's next `swift
# build` plans its own again and recompiles nothing.
scratch="$root/.build"
for app in VaporApp HummingbirdApp; do
    start=$(date +%s)
    if ! (cd "Examples/$app" && swift build --scratch-path "$scratch" >"$work/$app-build.log" 2>&1); then
        cat "$work/$app-build.log" >&2
        fail "$app did not build"
    fi
    if grep -E "^$root/Examples/.*: warning:" "$work/$app-build.log"; then fail "$app has warnings (listed above)"; fi
    echo "$app built in $(($(date +%s) - start)) s"

    framework=${app%App}
    python3 Scripts/public-names.py --package "Examples/$app" --build-dir "$scratch" --check "$framework"

    port=$(free_port)
    if [ "$app" = VaporApp ]; then
        UPSTREAM_URL=$upstream "$scratch/debug/$app" serve --hostname 127.0.0.1 --port "$port" \
            >"$work/$app.log" 2>&1 &
    else
        UPSTREAM_URL=$upstream PORT=$port "$scratch/debug/$app" >"$work/$app.log" 2>&1 &
    fi
    pids+=($!)
    wait_for "http://127.0.0.1:$port/uuid" "$work/$app.log"
    exercise "$app" "$port"
done
