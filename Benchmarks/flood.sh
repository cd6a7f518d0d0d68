#!/usr/bin/env bash
# Thousands of requests in flight in one process: memory per waiting request and throughput, raw AsyncHTTPClient
# and Courier/NIOTransport, each client in a process of its own (see README.md, sessions 16, 21, 22 and 24).
#
#   bash Benchmarks/flood.sh                          # 10,000 waiting, 20,000 GETs, 3 rounds per client
#   WAITING=2000 REQUESTS=4000 ROUNDS=1 bash Benchmarks/flood.sh
#   BENCH_BIN=/other/Benchmarks/.build/release/CourierBench bash Benchmarks/flood.sh
#   CLIENTS="transport-nio courier-nio" bash Benchmarks/flood.sh   # where the memory goes: the transport alone
#   JEMALLOC=1 bash Benchmarks/flood.sh               # both clients on jemalloc (LD_PRELOAD) instead of glibc's malloc
#
# Installs nginx when missing; serves run.sh's 1 KB JSON page on a free 127.0.0.1 port over plain HTTP/1.1.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WAITING="${WAITING:-10000}"
REQUESTS="${REQUESTS:-20000}"
ROUNDS="${ROUNDS:-3}"
# Other kinds (run.sh's diagnostic ones, e.g. transport-nio) print their rounds without the summary table.
CLIENTS="${CLIENTS:-ahc courier-nio}"

source "$BENCH_DIR/common.sh"
install_missing nginx

# JEMALLOC=1: every client process allocates with jemalloc (Debian's libjemalloc2, installed when missing), to tell
# what the flood costs the allocator from what it costs the client.
PRELOAD=()
if [[ "${JEMALLOC:-0}" == 1 ]]; then
    JEMALLOC_LIB="/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2"
    [[ -e "$JEMALLOC_LIB" ]] || apt_install libjemalloc2
    PRELOAD=(env "LD_PRELOAD=$JEMALLOC_LIB")
fi

serve_page

bench_binary
print_machine
echo "flood:   $WAITING requests waiting at once, $REQUESTS GETs, $ROUNDS round(s) per client, each in its own process"
echo "malloc:  $([[ ${#PRELOAD[@]} -gt 0 ]] && echo "jemalloc ($JEMALLOC_LIB)" || echo "glibc's")"
echo

declare -A results
for round in $(seq 1 "$ROUNDS"); do
    read -r -a clients <<<"$CLIENTS"
    ((round % 2)) || clients=($(printf '%s\n' "${clients[@]}" | tac))
    for client in "${clients[@]}"; do
        output="$(${PRELOAD[@]+"${PRELOAD[@]}"} "$BIN" flood --url "$BASE_URL" --client "$client" --waiting "$WAITING" --requests "$REQUESTS")"
        echo "round $round/$ROUNDS  $(grep -v '^result' <<<"$output")"
        line="$(grep '^result' <<<"$output")"
        results[$client]+="$(sed 's/^result //' <<<"$line");"
    done
done

echo
[[ "$CLIENTS" == "ahc courier-nio" ]] || exit 0
python3 - "${results[ahc]}" "${results[courier-nio]}" <<'PY'
import statistics, sys
def parse(text):
    return [dict(f.split("=") for f in item.split()) for item in text.split(";") if item]
print("| client | c=32 req/s (CPU µs/req) | flood req/s (CPU µs/req) | flood ÷ c=32 | KB per waiting request | peak MB "
      "| all rounds (KB per waiting) |")
print("|---|---:|---:|---:|---:|---:|---|")
for name, runs in zip(["raw AsyncHTTPClient", "Courier/NIOTransport"], map(parse, sys.argv[1:3])):
    c32 = statistics.median(float(r["c32_rps"]) for r in runs)
    flood = statistics.median(float(r["flood_rps"]) for r in runs)
    c32_cpu = statistics.median(float(r["c32_cpu_us"]) for r in runs)
    flood_cpu = statistics.median(float(r["flood_cpu_us"]) for r in runs)
    per = statistics.median(float(r["per_waiting_kb"]) for r in runs)
    peak = statistics.median(int(r["peak_kb"]) for r in runs) / 1024
    every = " / ".join(f"{float(r['per_waiting_kb']):.1f}" for r in runs)
    print(f"| {name} | {c32:,.0f} ({c32_cpu:.0f}) | {flood:,.0f} ({flood_cpu:.0f}) | {flood / c32:.2f} | {per:.1f} "
          f"| {peak:.0f} | {every} |")
PY
