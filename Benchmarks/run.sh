#!/usr/bin/env bash
# GET throughput of Courier vs. raw AsyncHTTPClient and raw URLSession against a local nginx (see README.md).
#
#   bash Benchmarks/run.sh                 # N=5000, c=1 and c=32, 7 interleaved rounds
#   bash Benchmarks/run.sh --repeat 9      # any further arguments go to CourierBench
#   WRK_SECONDS=0 bash Benchmarks/run.sh   # skip the wrk reference runs
#   bash Benchmarks/run.sh --stages        # where Courier's time goes, without a network (see README.md)
#   BENCH_BIN=/other/checkout/Benchmarks/.build/release/CourierBench bash Benchmarks/run.sh   # a prebuilt binary
#   BENCH_WRAP="perf record -g -o /tmp/p.data" bash Benchmarks/run.sh …   # run it under a profiler
#   GUEST_HALT_POLL_NS=200000 bash Benchmarks/run.sh   # diagnostic: the guest's idle vCPUs poll before halting
#                                                     # (restored on exit; see README.md, "Machine")
#
# Installs nginx and wrk with apt-get when they are missing, serves a 1 KB JSON file from a temporary nginx on a
# free 127.0.0.1 port, builds the benchmark in release mode and runs it. nginx is stopped on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WRK_SECONDS="${WRK_SECONDS:-5}"

source "$BENCH_DIR/common.sh"
install_missing nginx wrk

# The haltpoll idle driver's polling window (0 on this machine) sets what every thread wake-up costs; it is the
# machine's setting, so a run changes it only when asked to, and puts it back on exit.
HALT_POLL=/sys/module/haltpoll/parameters/guest_halt_poll_ns
if [[ -n "${GUEST_HALT_POLL_NS:-}" ]]; then
    [[ -w "$HALT_POLL" ]] || { echo "GUEST_HALT_POLL_NS: $HALT_POLL is not writable here" >&2; exit 1; }
    HALT_POLL_BEFORE="$(cat "$HALT_POLL")"
    trap 'echo "$HALT_POLL_BEFORE" >"$HALT_POLL"; cleanup' EXIT
    echo "$GUEST_HALT_POLL_NS" >"$HALT_POLL"
fi

write_page
write_static_nginx_conf

start_nginx
BASE_URL="http://127.0.0.1:$PORT/"
echo "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') (pid $NGINX_PID) serving ${BASE_URL}1k.json ($(wc -c <"$WORK/www/1k.json") bytes)"

# --- build ----------------------------------------------------------------------------------------------------
if [[ -n "${BENCH_BIN:-}" ]]; then
    BIN="$BENCH_BIN"  # a binary built elsewhere, e.g. from another commit for an A/B (see README.md)
    echo "using $BIN (not rebuilt)"
else
    echo "building CourierBench (release)…"
    build_start=$SECONDS
    forget_build_plan
    swift build -c release --package-path "$BENCH_DIR" --product CourierBench
    BIN="$(swift build -c release --package-path "$BENCH_DIR" --show-bin-path)/CourierBench"
    echo "built in $((SECONDS - build_start)) s"
fi

# --- machine --------------------------------------------------------------------------------------------------
echo
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), $(free -g | awk '/Mem:/ {print $2}') GiB;" \
    "nginx (1 worker) runs on the same cores"
echo "swift:   $(swift --version 2>&1 | head -1)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
echo "idle:    $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo unknown) driver," \
    "guest_halt_poll_ns $(cat "$HALT_POLL" 2>/dev/null || echo n/a)${HALT_POLL_BEFORE:+ (set for this run; was $HALT_POLL_BEFORE)}"

# --- reference: wrk -------------------------------------------------------------------------------------------
for arg in "$@"; do [[ "$arg" != "--stages" ]] || WRK_SECONDS=0; done
if [[ "$WRK_SECONDS" != "0" ]]; then
    echo
    for c in 1 32; do
        rps="$(wrk -t1 -c"$c" -d"${WRK_SECONDS}s" "${BASE_URL}1k.json" | awk '/Requests\/sec/ {print $2}')"
        echo "reference: wrk -t1 -c$c -d${WRK_SECONDS}s → $rps req/s (no JSON decoding; ceiling of the server + loopback)"
    done
fi

# --- the benchmark --------------------------------------------------------------------------------------------
echo
# BENCH_WRAP runs the benchmark under a tool, e.g. BENCH_WRAP="perf record -e cpu-clock -F 4000 -g -o /tmp/perf.data".
${BENCH_WRAP:-} "$BIN" --url "$BASE_URL" --path 1k.json "$@"
