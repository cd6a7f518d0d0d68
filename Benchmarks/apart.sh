#!/usr/bin/env bash
# The second harness: each client in a process of its own, timed from outside as a whole process, rounds alternating
# which client goes first. run.sh measures both clients in one process, their requests in alternating slices; this
# checks its ratios with nothing shared between the two clients but the machine (see README.md, "Results: session 24").
#
#   bash Benchmarks/apart.sh                       # plain http/1.1, c=1 (N=5,000) and c=32 (N=20,000), 5 rounds
#   ROUNDS=9 CONCURRENCY=32 REQUESTS=40000 bash Benchmarks/apart.sh
#   BENCH_BIN=/other/Benchmarks/.build/release/CourierBench bash Benchmarks/apart.sh
#   APART=1 bash Benchmarks/http2.sh               # the same over TLS (h2; PROTOCOL=http1.1 for HTTP/1.1)
#
# Serves run.sh's 1 KB JSON page from nginx on a free 127.0.0.1 port. A process is CourierBench with one client
# (`--clients ahc` or `--clients courier-nio`, `--repeat 1 --slices 1`): its wall and CPU time are the whole
# process's (start-up, client set-up and warm-up included, the same for both), read by the parent.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROUNDS="${ROUNDS:-5}"
CONCURRENCY="${CONCURRENCY:-1 32}"

source "$BENCH_DIR/common.sh"
install_missing nginx
serve_page

bench_binary
print_machine
echo "apart:   each client in its own process, whole-process wall and CPU, $ROUNDS round(s), medians"
echo

declare -A results
for concurrency in $CONCURRENCY; do
    if [[ -n "${REQUESTS:-}" ]]; then
        requests="$REQUESTS"
    elif [[ "$concurrency" == 1 ]]; then
        requests=5000
    else
        requests=20000
    fi
    for round in $(seq 1 "$ROUNDS"); do
        clients=(ahc courier-nio)
        ((round % 2)) || clients=(courier-nio ahc)
        for client in "${clients[@]}"; do
            timing="$(whole_process "$BIN" --url "$BASE_URL" --clients "$client" \
                --concurrency "$concurrency" --requests "$requests" --repeat 1 --slices 1)"
            read -r seconds cpu <<<"$(head -1 <<<"$timing")"
            results[$client/$concurrency]+="$requests $seconds $cpu;"
            printf 'c=%-2s round %d/%d  %-12s %8.0f req/s  CPU %6.1f µs/req  (whole process: %.2f s, CPU %.2f s)\n' \
                "$concurrency" "$round" "$ROUNDS" "$client" "$(python3 -c "print($requests / $seconds)")" \
                "$(python3 -c "print($cpu / $requests * 1e6)")" "$seconds" "$cpu"
        done
    done
done

echo
for concurrency in $CONCURRENCY; do
    python3 - "$concurrency" "${results[ahc/$concurrency]}" "${results[courier-nio/$concurrency]}" <<'PY'
import statistics, sys
def parse(text):
    return [tuple(map(float, item.split())) for item in text.split(";") if item]
c, (ahc, courier) = sys.argv[1], map(parse, sys.argv[2:4])
rate = lambda runs: statistics.median(n / s for n, s, _ in runs)
cpu = lambda runs: statistics.median(t / n * 1e6 for n, _, t in runs)
pairs = [(b[0] / b[1]) / (a[0] / a[1]) for a, b in zip(ahc, courier)]
print(f"c={c}: Courier/NIOTransport ÷ raw AsyncHTTPClient = {rate(courier) / rate(ahc):.2f}x req/s "
      f"(round by round {' / '.join(f'{p:.2f}' for p in pairs)} → median {statistics.median(pairs):.2f}x), "
      f"CPU per request {cpu(courier) / cpu(ahc):.2f}x ({cpu(courier):.0f} against {cpu(ahc):.0f} µs)")
PY
done
