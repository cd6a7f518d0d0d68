#!/usr/bin/env bash
# WebSockets: messages per second on one connection, Courier's WebSocketTask against the `websockets` package's own
# client (PyPI), both against the same `websockets` echo server on 127.0.0.1, alternating in each round. A round trip
# is a text message sent and its echo received; sending and receiving overlap (a sender and a receiver at once).
#
#   bash Benchmarks/websockets.sh                      # 20,000 messages of 64 bytes, 5 rounds
#   COUNT=5000 SIZE=4096 ROUNDS=3 bash Benchmarks/websockets.sh
#
# Installs `websockets` with pip when missing. CPU time is the client process's own (user + system).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COUNT="${COUNT:-20000}"
SIZE="${SIZE:-64}"
ROUNDS="${ROUNDS:-5}"

source "$BENCH_DIR/common.sh"
python3 -c "import websockets" 2>/dev/null || python3 -m pip install --quiet --disable-pip-version-check websockets

cat >"$WORK/server.py" <<'PY'
import asyncio, sys, websockets
async def echo(socket):
    async for message in socket:
        await socket.send(message)
async def main():
    async with websockets.serve(echo, "127.0.0.1", int(sys.argv[1]), max_size=None, ping_interval=None):
        await asyncio.Future()
asyncio.run(main())
PY
cat >"$WORK/client.py" <<'PY'
import asyncio, sys, time, websockets
async def exchange(socket, payload, count):
    async def send():
        for _ in range(count):
            await socket.send(payload)
    sender = asyncio.create_task(send())
    for _ in range(count):
        await socket.recv()
    await sender
async def main(url, count, size):
    async with websockets.connect(url, max_size=None, ping_interval=None) as socket:
        payload = "x" * size
        await exchange(socket, payload, 100)
        start = time.perf_counter()
        await exchange(socket, payload, count)
        print(f"seconds={time.perf_counter() - start}")
asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
PY
python3 "$WORK/server.py" "$PORT" &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 100); do port_is_free "$PORT" || break; sleep 0.05; done
URL="ws://127.0.0.1:$PORT/"

build_bench

echo
print_machine
echo "websockets: $COUNT text messages of $SIZE bytes each way on one connection, $ROUNDS round(s), median reported;"
echo "            server: the websockets package's echo server (Python, one process) on the same cores"
echo

# cpu_of COMMAND…: runs it and prints "seconds cpu" (its own seconds= line, and the child's user + system time).
cpu_of() {
    python3 - "$@" <<'PY'
import re, resource, subprocess, sys
before = resource.getrusage(resource.RUSAGE_CHILDREN)
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
if out.returncode != 0:
    sys.stderr.write(out.stderr + out.stdout)
    sys.exit(out.returncode)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
seconds = re.search(r"seconds=([0-9.e-]+)", out.stdout).group(1)
print(seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
PY
}

declare -A results
for round in $(seq 1 "$ROUNDS"); do
    for client in websockets courier; do
        if [[ $client == courier ]]; then
            line="$(cpu_of "$BIN" websocket --url "$URL" --count "$COUNT" --size "$SIZE")"
        else
            line="$(cpu_of python3 "$WORK/client.py" "$URL" "$COUNT" "$SIZE")"
        fi
        results[$client]+="$line;"
        read -r seconds cpu <<<"$line"
        printf 'round %d/%d  %-11s %9.0f messages/s  client CPU %5.2f s\n' "$round" "$ROUNDS" "$client" \
            "$(python3 -c "print($COUNT/$seconds)")" "$cpu"
    done
done

echo
python3 - "$COUNT" "${results[websockets]}" "${results[courier]}" <<'PY'
import statistics, sys
count = int(sys.argv[1])
def parse(text):
    samples = [tuple(map(float, item.split())) for item in text.split(";") if item]
    return statistics.median(count / s for s, _ in samples), statistics.median(c for _, c in samples), samples
py_rate, py_cpu, py = parse(sys.argv[2])
co_rate, co_cpu, co = parse(sys.argv[3])
print(f"{'client':12} {'messages/s':>11} {'client CPU s':>13}")
print(f"{'websockets':12} {py_rate:11.0f} {py_cpu:13.2f}")
print(f"{'courier':12} {co_rate:11.0f} {co_cpu:13.2f}")
rounds = " / ".join(f"{(count / c[0]) / (count / p[0]):.2f}" for p, c in zip(py, co))
print(f"\ncourier ÷ websockets: {co_rate / py_rate:.2f}x messages/s (CPU {co_cpu / py_cpu:.2f}x); round by round {rounds}")
PY
