#!/usr/bin/env bash
# Large transfers: Courier (NIOTransport) and raw AsyncHTTPClient against curl, one process per transfer so that
# each one's peak RSS is its own (see README.md, "Transfers").
#
#   bash Benchmarks/transfers.sh              # 1 GiB, 3 rounds, upload / download / multipart (and a download
#                                             # through an HTTPRequestOperation's OutputStream)
#   SIZE_MB=256 ROUNDS=1 bash Benchmarks/transfers.sh
#   COURIER_CLI=.build/release/courier bash Benchmarks/transfers.sh   # also the `courier` command's uploads:
#       `courier PUT URL < file` (cli-stdin), `cat file | courier PUT URL` (cli-pipe), `courier PUT URL @file`
#       (cli-file), each timed by its own `-w %{time_total}`
#
# Installs nginx and curl with apt-get when missing; nginx on a free 127.0.0.1 port serves the file for downloads
# and stores PUT bodies (WebDAV) for uploads. Everything is deleted on exit.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SIZE_MB="${SIZE_MB:-1024}"
ROUNDS="${ROUNDS:-3}"

source "$BENCH_DIR/common.sh"
install_missing nginx curl

mkdir -p "$WORK/www" "$WORK/temp" "$WORK/out"
chmod 777 "$WORK" "$WORK/www" "$WORK/temp" "$WORK/out"
echo "writing a ${SIZE_MB} MiB file of random bytes…"
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom >"$WORK/www/big.bin"
chmod 644 "$WORK/www/big.bin"

cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    client_max_body_size 0;
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
BASE="http://127.0.0.1:$PORT"

build_bench

echo
print_machine
echo "file:    ${SIZE_MB} MiB; curl $(curl --version | head -1 | cut -d' ' -f2); ${ROUNDS} round(s), median reported"
echo

run_case() {  # operation client
    local op="$1" client="$2" target
    case "$op" in
        download) target="$WORK/out/downloaded.bin" ;;
        *) target="$WORK/www/big.bin" ;;
    esac
    case "$client" in
        curl)
            case "$op" in
                upload) measure curl -sS -f -T "$target" -o /dev/null -w 'seconds=%{time_total}\n' "$BASE/upload/u.bin" ;;
                download) measure curl -sS -f -o "$target" -w 'seconds=%{time_total}\n' "$BASE/big.bin" ;;
                multipart) measure curl -sS -f -X PUT -F "file=@$target" -o /dev/null -w 'seconds=%{time_total}\n' "$BASE/upload/m.bin" ;;
            esac ;;
        cli-stdin)
            measure bash -c '"$1" --print "" -w "seconds=%{time_total}\n" PUT "$2" < "$3"' _ \
                "$COURIER_CLI" "$BASE/upload/u.bin" "$target" ;;
        cli-pipe)
            measure bash -c 'cat "$3" | "$1" --print "" -w "seconds=%{time_total}\n" PUT "$2"' _ \
                "$COURIER_CLI" "$BASE/upload/u.bin" "$target" ;;
        cli-file)
            measure "$COURIER_CLI" --print "" -w 'seconds=%{time_total}\n' PUT "$BASE/upload/u.bin" "@$target" ;;
        *)
            case "$op" in
                upload) measure "$BIN" transfer upload "$client" --url "$BASE/upload/u.bin" --file "$target" ;;
                download) measure "$BIN" transfer download "$client" --url "$BASE/big.bin" --file "$target" ;;
                multipart) measure "$BIN" transfer multipart "$client" --url "$BASE/upload/m.bin" --file "$target" ;;
            esac ;;
    esac
    rm -f "$WORK/out/downloaded.bin" "$WORK/out/upload/u.bin" "$WORK/out/upload/m.bin"
}

declare -A results
for round in $(seq 1 "$ROUNDS"); do
    for op in upload download multipart; do
        clients="curl ahc courier operation"
        [[ "$op" == upload && -n "${COURIER_CLI:-}" ]] && clients+=" cli-stdin cli-pipe cli-file"
        for client in $clients; do
            [[ "$op" == multipart && "$client" == ahc ]] && continue
            [[ "$op" != download && "$client" == operation ]] && continue
            if line="$(run_case "$op" "$client")" && [[ -n "$line" ]]; then
                results["$op/$client"]+="$line;"
                read -r seconds rss <<<"$line"
                printf 'round %d/%d  %-9s %-9s %8.0f MB/s  peak RSS %6.1f MB\n' "$round" "$ROUNDS" "$op" "$client" \
                    "$(python3 -c "print($SIZE_MB*1.048576/$seconds)")" "$(python3 -c "print($rss/1024)")"
            else
                echo "round $round/$ROUNDS  $op $client: FAILED" >&2
                results["$op/$client"]+="fail;"
            fi
        done
    done
done

echo
python3 - "$SIZE_MB" "$(for key in "${!results[@]}"; do echo "$key=${results[$key]}"; done)" <<'PY'
import statistics, sys
size_mb = float(sys.argv[1]) * 1.048576  # MB (10^6 bytes)
rows = {}
for line in sys.argv[2].splitlines():
    key, values = line.split("=", 1)
    samples = [v.split() for v in values.split(";") if v and v != "fail"]
    if samples:
        rows[key] = (statistics.median(size_mb / float(s) for s, _ in samples), max(int(r) for _, r in samples) / 1024)
print(f"{'operation':10} {'client':9} {'MB/s':>8} {'peak RSS MB':>12} {'vs curl':>8}")
ok = True
for op in ("upload", "download", "multipart"):
    curl = rows.get(f"{op}/curl", (float("nan"), 0))[0]
    for client in ("curl", "ahc", "courier", "operation", "cli-stdin", "cli-pipe", "cli-file"):
        if f"{op}/{client}" not in rows:
            if client == "courier" or (client == "operation" and op == "download"): ok = False
            continue
        rate, rss = rows[f"{op}/{client}"]
        print(f"{op:10} {client:9} {rate:8.0f} {rss:12.1f} {rate / curl:7.2f}x")
        if client == "courier":
            ok = ok and rate >= 0.85 * curl and rss <= 64
        if client == "operation":
            ok = ok and rss <= 64
        if client in ("cli-stdin", "cli-file"):  # a real pipe (cli-pipe) is reported, not held to it
            ok = ok and rate >= 0.8 * curl and rss <= 64
print()
print("target: Courier >= 0.85x curl throughput and peak RSS <= 64 MB for every operation; the download through an"
      " HTTPRequestOperation's OutputStream (client 'operation') peak RSS <= 64 MB; the courier command's uploads"
      " from a redirected file and @file >= 0.8x curl and <= 64 MB:", "PASS" if ok else "FAIL")
PY
