#!/usr/bin/env bash
# How long Linux's URLSession (swift-corelibs-foundation on libcurl) takes to read a response head of N lines, and
# how long another URLSession's request waits meanwhile (every URLSession of a process shares one work queue). The
# measurement behind "Gaps on Linux" in URLSessionTransport's documentation and the Transports article.
#
#   bash Benchmarks/urlsession-head-lines.sh                  # N = 5,000, 10,000 and 20,000
#   bash Benchmarks/urlsession-head-lines.sh 1000 40000       # other line counts
#
# A Python server on 127.0.0.1 answers every request with `HTTP/1.1 200`, N fields `xI: v` and a 2-byte body. The
# client, compiled with `swiftc -O`, sends one request with a URLSession; 0.5 s later another URLSession sends one to
# port 9 of 127.0.0.1 (closed: it fails at once when nothing holds the queue).
set -euo pipefail
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(5000 10000 20000)

work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/server.py" <<'PY'
import socket, sys, threading
lines, port_file = int(sys.argv[1]), sys.argv[2]
head = b"HTTP/1.1 200 OK\r\n" + b"".join(b"x%d: v\r\n" % i for i in range(lines)) + b"Content-Length: 2\r\n\r\nhi"
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
open(port_file, "w").write(str(listener.getsockname()[1]))
def answer(connection):
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = connection.recv(65536)
        if not chunk:
            return
        request += chunk
    connection.sendall(head)
    connection.close()
while True:
    connection, _ = listener.accept()
    threading.Thread(target=answer, args=(connection,), daemon=True).start()
PY

cat >"$work/client.swift" <<'SWIFT'
import Foundation
import FoundationNetworking

let url = URL(string: CommandLine.arguments[1])!
let start = Date()
let done = DispatchSemaphore(value: 0)
let first = URLSession(configuration: .ephemeral)
first.dataTask(with: url) { _, response, error in
    let status = (response as? HTTPURLResponse)?.statusCode
    let fields = (response as? HTTPURLResponse)?.allHeaderFields.count
    let outcome = error.map { "error \(($0 as NSError).code)" } ?? "status \(status ?? 0), \(fields ?? 0) fields"
    print(String(format: "head read in %.2f s (%@)", Date().timeIntervalSince(start), outcome))
    done.signal()
}.resume()
let otherDone = DispatchSemaphore(value: 0)
DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
    let sent = Date()
    URLSession(configuration: .ephemeral).dataTask(with: URL(string: "http://127.0.0.1:9/")!) { _, _, _ in
        print(String(format: "another session's request to a closed port ended after %.2f s", Date().timeIntervalSince(sent)))
        otherDone.signal()
    }.resume()
}
done.wait()
otherDone.wait()
SWIFT
swiftc -O "$work/client.swift" -o "$work/client"

for lines in "${counts[@]}"; do
    rm -f "$work/port"
    python3 "$work/server.py" "$lines" "$work/port" &
    server_pid=$!
    for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
    echo "$lines lines:"
    "$work/client" "http://127.0.0.1:$(cat "$work/port")/" | sed 's/^/  /'
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
done
