#!/usr/bin/env bash
# The stall hunt: how late do timers fire on NIO's event loops, Swift's cooperative pool and a Dispatch queue while
# Courier runs 500 slow streamed downloads plus file uploads and downloads (see README.md, "Stress").
#
#   bash Benchmarks/stress.sh                  # both transports, 500 streams, 4 transfer loops
#   STREAMS=200 TRANSFERS=2 bash Benchmarks/stress.sh
#
# Installs nginx when missing; nginx on a free 127.0.0.1 port serves the files and stores PUT bodies.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STREAMS="${STREAMS:-500}"
TRANSFERS="${TRANSFERS:-4}"

source "$BENCH_DIR/common.sh"
install_missing nginx

mkdir -p "$WORK/www" "$WORK/temp" "$WORK/out"
chmod 777 "$WORK" "$WORK/www" "$WORK/temp" "$WORK/out"
head -c $((1 << 20)) /dev/urandom >"$WORK/www/stream.bin"
head -c $((64 << 20)) /dev/urandom >"$WORK/www/big.bin"
head -c $((64 << 20)) /dev/urandom >"$WORK/upload.bin"
chmod 644 "$WORK/www/"*.bin

cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 2048; }
http {
    access_log off;
    default_type application/octet-stream;
    sendfile on;
    client_max_body_size 0;
    keepalive_requests 1000000;
$(nginx_temp_paths)
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
        location /upload/ {
            root $WORK/out;
            dav_methods PUT DELETE;
            create_full_put_path on;
        }
    }
}
CONF
start_nginx
BASE="http://127.0.0.1:$PORT/"

echo "building CourierBench (release)…"
forget_build_plan
swift build -c release --package-path "$BENCH_DIR" --product CourierBench >/dev/null
BIN="$(swift build -c release --package-path "$BENCH_DIR" --show-bin-path)/CourierBench"

echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for transport in nio urlsession; do
    echo
    "$BIN" stress --url "$BASE" --transport "$transport" --streams "$STREAMS" --transfers "$TRANSFERS" \
        --upload-file "$WORK/upload.bin"
    rm -rf "$WORK/out/upload"
done
