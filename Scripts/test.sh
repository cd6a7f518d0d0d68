#!/usr/bin/env bash
# The README's test command, and CI's (`.ci/run` calls it): installs what the tests need when it is missing (from
# Debian's packages and PyPI), fails on any compiler warning in Courier's own code and on a layering violation, then
# runs the whole suite with `swift test`, then again with NIOTransport's own connections off. It also builds the DocC
# catalog and fails on any of its warnings. Arguments go to `swift test` (e.g. `--filter WebSocket`; then the second
# run is skipped).
set -euo pipefail
cd "$(dirname "$0")/.."

# From PyPI, only when missing: httpbin under gunicorn (the integration tests' server), `websockets` (the
# WebSocket interoperability tests' server) and pproxy (the SOCKS5 proxy of the proxy tests); the tests start and
# stop them on 127.0.0.1 themselves.
if ! python3 -c "import httpbin, gunicorn, websockets, pproxy" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check httpbin gunicorn websockets pproxy
fi

# From Debian, each only when missing: nginx (the security and HTTP/2 tests run it over HTTPS on 127.0.0.1 and
# start and stop it themselves); `unshare` and `ip` (the reachability tests make a private network namespace);
# the headers of libpng and libjpeg-turbo (CourierImageDecoding links them); tinyproxy (the proxy tests' HTTP proxy).
missing=()
[ -x /usr/sbin/nginx ] || missing+=(nginx)
[ -x /usr/bin/tinyproxy ] || missing+=(tinyproxy)
[ -x /usr/bin/unshare ] || missing+=(util-linux)
command -v ip >/dev/null || missing+=(iproute2)
[ -f /usr/include/png.h ] || missing+=(libpng-dev)
[ -f /usr/include/jpeglib.h ] || missing+=(libjpeg62-turbo-dev)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

log=$(mktemp)
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^$PWD/(Sources|Tests)/.*: warning:" "$log"; then
    echo "error: the build has warnings (listed above)" >&2
    exit 1
fi

# No folder of the module may use one above it (see the Architecture article).
python3 Scripts/architecture.py >/dev/null

# No public name of Courier's libraries is a name of NIO, AsyncHTTPClient, swift-http-types, swift-openapi-runtime,
# Vapor or Hummingbird (Scripts/public-names/ keeps the last two's lists; Scripts/examples.sh checks them).
python3 Scripts/public-names.py

# The DocC catalog builds without a warning (a broken symbol link, an undocumented parameter).
swift package generate-documentation --target Courier --warnings-as-errors >/dev/null

# At most 8 tests at once (Swift Testing otherwise starts every test of the suite together): each test starts real
# servers, event loops and processes, and a thousand of them at once on a 2-core machine turned 5-second waits for a
# loopback request into a lottery (seen: a different timing test failing in each of three full runs, every one of
# them passing alone). Eight keeps both cores busy and the whole run about as fast.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}"
swift test "$@"

# The whole suite again with NIOTransport's own HTTP/1.1 connections off (a debug build reads
# COURIER_NIO_OWN_CONNECTIONS), so that every test that makes a default transport also checks the AsyncHTTPClient
# path. Its output goes to a file; only a line of its own (or the failures) is printed, so the run above stays the
# one summary of `swift test`.
if [ $# -eq 0 ]; then
    other=$(mktemp)
    if COURIER_NIO_OWN_CONNECTIONS=0 swift test --skip-build >"$other" 2>&1; then
        echo "AsyncHTTPClient path (COURIER_NIO_OWN_CONNECTIONS=0): $(sed -n 's/^✔ Test run with \([0-9]*\) tests.*/\1/p' "$other") tests passed"
    else
        grep -E '^✘' "$other" >&2 || tail -40 "$other" >&2
        echo "error: the suite failed with NIOTransport's own connections off (COURIER_NIO_OWN_CONNECTIONS=0)" >&2
        exit 1
    fi
fi
