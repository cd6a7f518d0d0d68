#!/usr/bin/env bash
# Heap allocations per request of each client, counted exactly with uprobes on glibc's allocator (see README.md).
#
#   bash Benchmarks/allocations.sh                       # ahc and courier-nio, c=1 and c=32
#   bash Benchmarks/allocations.sh ahc courier-nio transport-nio
#   BENCH_BIN=/other/CourierBench bash Benchmarks/allocations.sh   # a prebuilt binary
#   HTTPS=h2 bash Benchmarks/allocations.sh ahc courier # over TLS through http2.sh (HTTPS=http1.1 for HTTP/1.1)
#
# Each client runs N and then 2N requests; the difference divided by N is what one request allocates, without the
# set-up (client, connections, threads). Needs root (perf probe) and builds the benchmark unless BENCH_BIN is set.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N="${N:-2000}"
CLIENTS=("$@")
((${#CLIENTS[@]})) || CLIENTS=(ahc courier-nio)
LIBC="$(ldconfig -p | awk '/libc\.so\.6 .*x86-64|libc\.so\.6 \(libc6,x86-64/ {print $NF; exit}')"
[[ -n "$LIBC" ]] || LIBC=/lib/x86_64-linux-gnu/libc.so.6
EVENTS=()
for function in malloc calloc realloc posix_memalign; do
    perf probe -l 2>/dev/null | grep -q "probe_libc:$function " || perf probe -q -x "$LIBC" "$function" >/dev/null
    EVENTS+=("probe_libc:$function")
done
if [[ -z "${BENCH_BIN:-}" ]]; then
    swift build -c release --package-path "$BENCH_DIR" --product CourierBench >/dev/null
    export BENCH_BIN="$(swift build -c release --package-path "$BENCH_DIR" --show-bin-path)/CourierBench"
fi

# count CLIENT C REQUESTS: the allocator calls of one run.
count() {
    local out
    out="$(mktemp)"
    if [[ -n "${HTTPS:-}" ]]; then
        # http2.sh runs the benchmark binary once per round: through a wrapper that counts that one process.
        local wrapper
        wrapper="$(mktemp)"
        printf '#!/bin/sh\nexec perf stat -x, -o %s -e %s %s "$@"\n' "$out" "$(IFS=,; echo "${EVENTS[*]}")" \
            "$BENCH_BIN" >"$wrapper"
        chmod +x "$wrapper"
        BENCH_BIN="$wrapper" CLIENTS="$1" CONCURRENCY="$2" REQUESTS="$3" ROUNDS=1 HANDSHAKES=0 PROTOCOL="$HTTPS" \
            bash "$BENCH_DIR/http2.sh" >/dev/null 2>&1
        rm -f "$wrapper"
    else
        BENCH_WRAP="perf stat -x, -o $out -e $(IFS=,; echo "${EVENTS[*]}")" WRK_SECONDS=0 \
            bash "$BENCH_DIR/run.sh" --clients "$1" --concurrency "$2" --requests "$3" --repeat 1 >/dev/null 2>&1
    fi
    awk -F, '/probe_libc/ {sum += $1} END {print sum}' "$out"
    rm -f "$out"
}

[[ -z "${HTTPS:-}" ]] || echo "over TLS, $HTTPS (http2.sh's clients: ahc, courier)"
echo "| client | c | allocations per request | (N=$N: calls at N / at 2N) |"
echo "|---|---:|---:|---|"
for client in "${CLIENTS[@]}"; do
    for c in 1 32; do
        once="$(count "$client" "$c" "$N")"
        twice="$(count "$client" "$c" $((2 * N)))"
        echo "| $client | $c | $(awk -v a="$once" -v b="$twice" -v n="$N" 'BEGIN {printf "%.1f", (b - a) / n}') | $once / $twice |"
    done
done
