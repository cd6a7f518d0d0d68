#!/usr/bin/env bash
# HTTPS over HTTP/1.1: 1 KB GETs at concurrency 32 (nginx without http2, every client HTTP/1.1), Courier
# (NIOTransport) against raw AsyncHTTPClient and `curl --parallel --http1.1`. http2.sh with PROTOCOL=http1.1; every
# variable it takes works here too (see README.md, "HTTP/2"):
#
#   bash Benchmarks/https.sh
#   CONCURRENCY=1 REQUESTS=3000 TRUST=system bash Benchmarks/https.sh
#   APART=1 TRUST=system bash Benchmarks/https.sh # each Swift client in a process of its own
set -euo pipefail
PROTOCOL=http1.1 exec bash "$(dirname "${BASH_SOURCE[0]}")/http2.sh" "$@"
