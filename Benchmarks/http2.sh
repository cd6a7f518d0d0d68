#!/usr/bin/env bash
# HTTP/2: 1 KB GETs at concurrency 32 over TLS on one connection, Courier (NIOTransport) against raw
# AsyncHTTPClient and `curl --parallel --http2`, in the same run (see README.md, "HTTP/2").
#
#   bash Benchmarks/http2.sh                       # N=10,000 GETs per client and round, c=32, 5 rounds, medians
#   REQUESTS=5000 ROUNDS=3 bash Benchmarks/http2.sh
#   BENCH_BIN=/other/Benchmarks/.build/release/CourierBench bash Benchmarks/http2.sh   # a prebuilt binary
#
#   CONCURRENCY=8 bash Benchmarks/http2.sh        # another concurrency (curl's --parallel-max too)
#   PROTOCOL=http1.1 bash Benchmarks/http2.sh     # https over HTTP/1.1: nginx without http2, every client HTTP/1.1
#   TRUST=system bash Benchmarks/http2.sh         # the CA in the system trust store, both Swift clients on defaults
#   CLIENTS=courier bash Benchmarks/http2.sh      # one Swift client alone (for perf), no curl rounds
#   HANDSHAKES=50 bash Benchmarks/http2.sh        # new clients per round whose first request's cost is reported
#   APART=1 TRUST=system bash Benchmarks/http2.sh # each Swift client in a process of its own, timed as a whole
#                                                 # (with TRUST=policy Courier's process also loads the system's
#                                                 # roots, which raw AHC, trusting the CA file alone, does not)
#
# Installs nginx, curl and openssl with apt-get when missing. Makes a private CA and a leaf certificate for
# 127.0.0.1 with openssl, serves run.sh's 1 KB JSON file from nginx over `ssl http2` (TLS 1.2 and 1.3) on a free
# 127.0.0.1 port, and in each round measures CourierBench's raw AsyncHTTPClient and Courier clients (one process,
# their requests in alternating slices) and curl (its own process), alternating which goes first. Every response
# must be HTTP/2. nginx is stopped and the certificates deleted on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REQUESTS="${REQUESTS:-10000}"
CONCURRENCY="${CONCURRENCY:-32}"
ROUNDS="${ROUNDS:-5}"
PROTOCOL="${PROTOCOL:-h2}"
TRUST="${TRUST:-policy}"
CLIENTS="${CLIENTS:-ahc,courier}"
APART="${APART:-0}"
HANDSHAKES="${HANDSHAKES:-20}"
# Apart, a process's time includes its set-up and warm-up; new clients' first requests would add to it.
[[ "$APART" == 1 ]] && HANDSHAKES=0
HANDSHAKES_OPTION=()
[[ "$HANDSHAKES" -gt 0 ]] && HANDSHAKES_OPTION=(--handshakes "$HANDSHAKES")
[[ "$PROTOCOL" == h2 || "$PROTOCOL" == http1.1 ]] || { echo "PROTOCOL is h2 or http1.1" >&2; exit 1; }
[[ "$TRUST" == policy || "$TRUST" == system ]] || { echo "TRUST is policy or system" >&2; exit 1; }
if [[ "$PROTOCOL" == h2 ]]; then
    LISTEN="ssl http2" CURL_VERSION="--http2" VERSION_SEEN="2" VERSION_NAME="HTTP/2"
else
    LISTEN="ssl" CURL_VERSION="--http1.1" VERSION_SEEN="1.1" VERSION_NAME="HTTP/1.1"
fi

source "$BENCH_DIR/common.sh"
install_missing nginx curl openssl
# --parallel came with curl 7.66; HTTP/2 needs a curl built with nghttp2.
curl --help all | grep -q -- '--parallel-max' || { echo "no --parallel in $(curl --version | head -1)" >&2; exit 1; }
curl --version | grep -q '^Features:.*HTTP2' || { echo "no HTTP/2 in $(curl --version | head -1)" >&2; exit 1; }

# A second free port, for nginx's stub_status (plain HTTP): the connection counts per client.
STATUS_PORT=""
for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 30000))
    if [[ "$candidate" != "$PORT" ]] && port_is_free "$candidate"; then STATUS_PORT="$candidate"; break; fi
done
[[ -n "$STATUS_PORT" ]] || { echo "no second free port found" >&2; exit 1; }

write_page
mkdir -p "$WORK/tls"

# --- certificates: root CA → leaf for 127.0.0.1 (P-256, valid for two days, made fresh each run) --------------
TLS="$WORK/tls"
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=Courier benchmark root CA" -keyout "$TLS/root.key" -out "$TLS/root.pem" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=127.0.0.1" -keyout "$TLS/leaf.key" -out "$TLS/leaf.csr" 2>/dev/null
cat >"$TLS/leaf.ext" <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1
EOF
openssl x509 -req -in "$TLS/leaf.csr" -CA "$TLS/root.pem" -CAkey "$TLS/root.key" -CAcreateserial -days 2 \
    -extfile "$TLS/leaf.ext" -out "$TLS/leaf.pem" 2>/dev/null
openssl verify -CAfile "$TLS/root.pem" "$TLS/leaf.pem" >/dev/null
# The worker may run as nobody when nginx is started as root; the master reads the key before dropping privileges.
chmod 755 "$TLS"

# Debian's nginx 1.22 offers TLS 1.0-1.2 unless told otherwise. A second server has nginx's stub_status.
write_static_nginx_conf "$LISTEN" "        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_certificate $TLS/leaf.pem;
        ssl_certificate_key $TLS/leaf.key;" "    server {
        listen 127.0.0.1:$STATUS_PORT;
        location = /status { stub_status; }
    }"

start_nginx
BASE_URL="https://127.0.0.1:$PORT/"
STATUS_URL="http://127.0.0.1:$STATUS_PORT/status"
for _ in $(seq 1 100); do port_is_free "$STATUS_PORT" || break; sleep 0.05; done
echo "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') (pid $NGINX_PID) serving ${BASE_URL}1k.json" \
    "($(wc -c <"$WORK/www/1k.json") bytes) over TLS + HTTP/2"
probe="$(curl -sS "$CURL_VERSION" --cacert "$TLS/root.pem" -o /dev/null \
    -w '%{http_version} %{response_code} %{size_download}' "${BASE_URL}1k.json")"
[[ "$probe" == "$VERSION_SEEN 200 1024" ]] ||
    { echo "preflight: curl got '$probe', not '$VERSION_SEEN 200 1024'" >&2; exit 1; }

# TRUST=system: the root goes into the system's trust store for this run (and out again on exit), so that both Swift
# clients verify with their defaults and Courier's policy is the default one (no trust gate).
if [[ "$TRUST" == system ]]; then
    command -v update-ca-certificates >/dev/null || { echo "TRUST=system needs Debian's ca-certificates" >&2; exit 1; }
    SYSTEM_CA="/usr/local/share/ca-certificates/courier-bench-$$.crt"
    cp "$TLS/root.pem" "$SYSTEM_CA"
    update-ca-certificates >/dev/null 2>&1
    remove_system_ca() { rm -f "$SYSTEM_CA"; update-ca-certificates --fresh >/dev/null 2>&1 || true; cleanup; }
    trap remove_system_ca EXIT
fi

bench_binary

echo
print_machine
echo "tools:   $(curl --version | head -1 | cut -d' ' -f1-5), $(openssl version | cut -d' ' -f1-2)"
echo "https:   N=$REQUESTS GETs per client and round at concurrency $CONCURRENCY, $ROUNDS round(s), median reported;"
echo "         $VERSION_NAME, trust: $TRUST, clients: $CLIENTS; every response checked to be $VERSION_NAME"
echo

# accepted: nginx's count of accepted connections so far (this read's own connection included).
accepted() { curl -sS "$STATUS_URL" | awk 'NR == 3 {print $1}'; }

# curl_round: curl fetching the file N times, 32 at once, multiplexed on one connection (--parallel waits for
# multiplexing unless --parallel-immediate). Its wall and CPU time are the whole process's, start-up and handshake
# included. Prints "seconds cpu versions connections".
curl_round() {
    local before after timing versions
    before="$(accepted)"
    timing="$(whole_process curl --parallel --parallel-max "$CONCURRENCY" "$CURL_VERSION" --cacert "$TLS/root.pem" \
        --no-progress-meter -o /dev/null -w '%{http_version} %{response_code} %{size_download}\n' \
        "${BASE_URL}1k.json?[1-$REQUESTS]")"
    after="$(accepted)"
    # Every transfer must have been a 200 of the whole file in the version asked for ("2" is how curl writes HTTP/2).
    versions="$(tail -n +2 <<<"$timing" | sort | uniq -c |
        awk '{printf "%s%s/%s/%sx%s", (NR > 1 ? "," : ""), $2, $3, $4, $1}')"
    echo "$(head -1 <<<"$timing") $versions $((after - before - 1))"
}

declare -A results handshakes
swift_round() {
    [[ "$APART" == 1 ]] && { apart_round; return; }
    local output line
    output="$("$BIN" http2 --url "$BASE_URL" --ca "$TLS/root.pem" --status "$STATUS_URL" \
        --requests "$REQUESTS" --concurrency "$CONCURRENCY" --protocol "$PROTOCOL" --trust "$TRUST" \
        --clients "$CLIENTS" ${HANDSHAKES_OPTION[@]+"${HANDSHAKES_OPTION[@]}"})"
    while read -r line; do
        if [[ "$line" == handshake* ]]; then
            local who ms cpu_ms
            who="$(sed 's/.*client=\([^ ]*\).*/\1/' <<<"$line")"
            ms="$(sed 's/.* ms=\([^ ]*\).*/\1/' <<<"$line")"
            cpu_ms="$(sed 's/.*cpu_ms=\([^ ]*\).*/\1/' <<<"$line")"
            handshakes[$who]+="$ms $cpu_ms;"
            printf 'round %d/%d  %-8s a new client and connection: %s ms, CPU %s ms (mean of %d)\n' "$round" "$ROUNDS" \
                "$who" "$ms" "$cpu_ms" "$HANDSHAKES"
            continue
        fi
        [[ "$line" == result* ]] || continue
        local client seconds cpu opened open
        client="$(sed 's/.*client=\([^ ]*\).*/\1/' <<<"$line")"
        seconds="$(sed 's/.*seconds=\([^ ]*\).*/\1/' <<<"$line")"
        cpu="$(sed 's/.*cpu=\([^ ]*\).*/\1/' <<<"$line")"
        opened="$(sed 's/.*opened=\([^ ]*\).*/\1/' <<<"$line")"
        open="$(sed 's/.*open=\([^ ]*\).*/\1/' <<<"$line")"
        results[$client]+="$seconds $cpu $opened $open;"
        report "$client" "$seconds" "$cpu" "$VERSION_NAME (all)" "opened $opened, open at the end $open"
    done <<<"$output"
}

# apart_round (APART=1): each Swift client of $CLIENTS in a process of its own, alternating which goes first, its wall
# and CPU time the whole process's as its parent reads them (set-up, handshake and warm-up included). The process's
# own result line gives the connections it opened.
apart_round() {
    local clients client timing line seconds cpu opened open
    IFS=, read -r -a clients <<<"$CLIENTS"
    ((round % 2)) || clients=($(printf '%s\n' "${clients[@]}" | tac))
    for client in "${clients[@]}"; do
        timing="$(whole_process "$BIN" http2 --url "$BASE_URL" --ca "$TLS/root.pem" --status "$STATUS_URL" \
            --requests "$REQUESTS" --concurrency "$CONCURRENCY" --protocol "$PROTOCOL" --trust "$TRUST" \
            --clients "$client")"
        read -r seconds cpu <<<"$(head -1 <<<"$timing")"
        line="$(grep '^result' <<<"$timing")"
        opened="$(sed 's/.*opened=\([^ ]*\).*/\1/' <<<"$line")"
        open="$(sed 's/.*open=\([^ ]*\).*/\1/' <<<"$line")"
        results[$client]+="$seconds $cpu $opened $open;"
        report "$client" "$seconds" "$cpu" "$VERSION_NAME (all)" "opened $opened, open at the end $open (whole process)"
    done
}

# report CLIENT SECONDS CPU VERSION CONNECTIONS: one line of a round.
report() {
    printf 'round %d/%d  %-8s %8.0f req/s  CPU %5.1f µs/req  %s  connections: %s\n' "$round" "$ROUNDS" "$1" \
        "$(python3 -c "print($REQUESTS / $2)")" "$(python3 -c "print($3 / $REQUESTS * 1e6)")" "$4" "$5"
}

for round in $(seq 1 "$ROUNDS"); do
    # Alternate which goes first, so that neither always follows the other.
    order=(swift curl)
    ((round % 2)) || order=(curl swift)
    [[ "$CLIENTS" == ahc,courier ]] || order=(swift)
    # Apart, a Swift client's time includes its process's start-up, which curl's one process would not match.
    [[ "$APART" == 1 ]] && order=(swift)
    for which in "${order[@]}"; do
        if [[ $which == swift ]]; then
            swift_round
        else
            read -r seconds cpu versions connections <<<"$(curl_round)"
            if [[ "$versions" != "$VERSION_SEEN/200/1024x$REQUESTS" ]]; then
                echo "curl: responses were $versions, not all $VERSION_NAME 200s of 1,024 bytes" >&2
                exit 1
            fi
            results[curl]+="$seconds $cpu $connections -1;"
            report curl "$seconds" "$cpu" "$VERSION_NAME (all)" "opened $connections"
        fi
    done
done

echo
[[ "$CLIENTS" == ahc,courier ]] || exit 0
python3 - "$REQUESTS" "${results[ahc]}" "${results[courier]}" "${results[curl]:-}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
def parse(text):
    return [tuple(map(float, item.split())) for item in text.split(";") if item]
runs = dict(zip(["raw AsyncHTTPClient", "Courier/NIOTransport", "curl --parallel"], map(parse, sys.argv[2:5])))
runs = {name: rs for name, rs in runs.items() if rs}  # no curl rounds with APART=1
rate = {name: statistics.median(n / r[0] for r in rs) for name, rs in runs.items()}
cpu = {name: statistics.median(r[1] / n * 1e6 for r in rs) for name, rs in runs.items()}
print("| client | req/s (median) | req/s (all rounds) | CPU µs/req (median) | connections opened per round |")
print("|---|---:|---|---:|---|")
for name, rs in runs.items():
    every = " / ".join(f"{n / r[0]:,.0f}" for r in rs)
    opened = " / ".join(str(int(r[2])) for r in rs)
    print(f"| {name} | {rate[name]:,.0f} | {every} | {cpu[name]:.1f} | {opened} |")
ahc, courier, curl = runs["raw AsyncHTTPClient"], runs["Courier/NIOTransport"], runs.get("curl --parallel")
def paired(a, b):
    return statistics.median((n / x[0]) / (n / y[0]) for x, y in zip(a, b))
print()
print(f"Courier ÷ raw AsyncHTTPClient: {rate['Courier/NIOTransport'] / rate['raw AsyncHTTPClient']:.2f}x req/s"
      f" (median of round ratios {paired(courier, ahc):.2f}x), CPU per request"
      f" {cpu['Courier/NIOTransport'] / cpu['raw AsyncHTTPClient']:.2f}x")
if curl:
    print(f"Courier ÷ curl:                {rate['Courier/NIOTransport'] / rate['curl --parallel']:.2f}x req/s"
          f" (median of round ratios {paired(courier, curl):.2f}x), CPU per request"
          f" {cpu['Courier/NIOTransport'] / cpu['curl --parallel']:.2f}x")
PY

# A new client's first request over a new connection (its TLS context, TCP, the handshake, ALPN, one GET), medians
# of the rounds' means.
[[ "$HANDSHAKES" -gt 0 ]] || exit 0
python3 - "${handshakes[ahc]}" "${handshakes[courier]}" <<'PY'
import statistics, sys
def parse(text):
    return [tuple(map(float, item.split())) for item in text.split(";") if item]
ahc, courier = map(parse, sys.argv[1:3])
ms = lambda runs, i: statistics.median(r[i] for r in runs)
print(f"New connection: raw AsyncHTTPClient {ms(ahc, 0):.2f} ms (CPU {ms(ahc, 1):.2f} ms),"
      f" Courier {ms(courier, 0):.2f} ms (CPU {ms(courier, 1):.2f} ms):"
      f" Courier ÷ raw {ms(courier, 0) / ms(ahc, 0):.2f}x time, {ms(courier, 1) / ms(ahc, 1):.2f}x CPU")
PY
