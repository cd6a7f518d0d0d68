#!/usr/bin/env bash
# Images: 1,000 distinct 256×256 PNGs from nginx through ImageDownloader (decoded to pixels, into an
# AutoPurgingImageCache of 32 MB), against raw AsyncHTTPClient downloading the same files. One process per run so
# each peak RSS is its own (see README.md, "Images").
#
#   bash Benchmarks/images.sh                 # 1,000 images, 3 rounds, cache 32 MB, 4 active downloads
#   COUNT=200 ROUNDS=1 CACHE_MB=16 bash Benchmarks/images.sh
#
# Installs nginx (and libpng/libjpeg headers for CourierImageDecoding) with apt-get when missing.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COUNT="${COUNT:-1000}"
ROUNDS="${ROUNDS:-3}"
CACHE_MB="${CACHE_MB:-32}"
ACTIVE="${ACTIVE:-4}"

source "$BENCH_DIR/common.sh"
install_missing nginx
if ! [ -f /usr/include/png.h ] || ! [ -f /usr/include/jpeglib.h ]; then apt_install libpng-dev libjpeg62-turbo-dev; fi

mkdir -p "$WORK/www" "$WORK/temp"
chmod 777 "$WORK" "$WORK/www" "$WORK/temp"
echo "writing ${COUNT} PNGs of 256×256 (RGB, a gradient and noise, distinct per image)…"
python3 - "$WORK/www" "$COUNT" <<'PY'
import random, struct, sys, zlib
folder, count = sys.argv[1], int(sys.argv[2])
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
for n in range(count):
    rng = random.Random(n)
    noise = bytes(rng.getrandbits(8) & 0x0F for _ in range(256 * 3))
    rows = bytearray()
    for y in range(256):
        rows.append(0)
        row = bytearray(256 * 3)
        for x in range(256):
            row[x * 3] = (x + n) & 0xFF
            row[x * 3 + 1] = (y * 3 + n * 7) & 0xFF
            row[x * 3 + 2] = ((x ^ y) + n * 13) & 0xFF
        rows += bytes(a ^ b for a, b in zip(row, noise[(y * 7) % 256:] + noise[:(y * 7) % 256]))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b"")
    with open(f"{folder}/{n}.png", "wb") as f:
        f.write(png)
PY
chmod 644 "$WORK"/www/*.png
BYTES=$(du -cb "$WORK"/www/*.png | tail -1 | cut -f1)

cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    types { image/png png; }
    sendfile on;
$(nginx_temp_paths)
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
        keepalive_requests 100000;
    }
}
CONF
start_nginx
BASE="http://127.0.0.1:$PORT"

build_bench

echo
print_machine
echo "images:  ${COUNT} PNGs, 256×256 RGB, $((BYTES / COUNT)) bytes each on average; ${ACTIVE} downloads at once;"
echo "         cache ${CACHE_MB} MB; ${ROUNDS} round(s), median reported"
echo


MEASURE_KEYS="cache"
export MEASURE_KEYS
declare -A results
for round in $(seq 1 "$ROUNDS"); do
    for client in ahc courier-headers courier; do
        if line="$(measure "$BIN" images "$client" --base "$BASE" --count "$COUNT" --cache-mb "$CACHE_MB" --active "$ACTIVE")"; then
            results["$client"]+="$line;"
            read -r seconds rss cache <<<"$line"
            printf 'round %d/%d  %-16s %7.0f images/s  peak RSS %6.1f MB  cache %5.1f MB\n' "$round" "$ROUNDS" "$client" \
                "$(python3 -c "print($COUNT/$seconds)")" "$(python3 -c "print($rss/1024)")" "$(python3 -c "print($cache/1048576)")"
        else
            echo "round $round/$ROUNDS  $client: FAILED" >&2
        fi
    done
done

echo
python3 - "$COUNT" "$CACHE_MB" "$(for key in "${!results[@]}"; do echo "$key=${results[$key]}"; done)" <<'PY'
import statistics, sys
count, cache_mb = int(sys.argv[1]), int(sys.argv[2])
rows = {}
for line in sys.argv[3].splitlines():
    key, values = line.split("=", 1)
    samples = [v.split() for v in values.split(";") if v]
    rows[key] = (statistics.median(count / float(s) for s, _, _ in samples), max(int(r) for _, r, _ in samples) / 1024,
                 max(int(c) for _, _, c in samples) / 1048576)
print(f"{'client':16} {'images/s':>9} {'peak RSS MB':>12} {'cache MB':>9} {'vs raw':>7}")
base = rows.get("ahc", (float("nan"), float("nan"), 0))
for client in ("ahc", "courier-headers", "courier"):
    if client in rows:
        rate, rss, cache = rows[client]
        print(f"{client:16} {rate:9.0f} {rss:12.1f} {cache:9.1f} {rate / base[0]:6.2f}x")
ok = "courier" in rows and rows["courier"][2] <= cache_mb and rows["courier"][1] <= base[1] + cache_mb + 16
print()
print(f"target: the cache stays within {cache_mb} MB and the decoding downloader's peak RSS within raw "
      f"AsyncHTTPClient's + {cache_mb} MB (the cache) + 16 MB:", "PASS" if ok else "FAIL")
PY
