# Shared by the benchmark scripts: tools, a work folder, a free port, an nginx that is stopped on exit, the benchmark
# binary, and a whole process timed from outside.
# Source it; it sets WORK, PORT and NGINX, and start_nginx sets NGINX_PID.

# install_missing TOOL... : apt-get installs the Debian packages of the same names that are not on PATH.
install_missing() {
    local missing=() tool
    for tool in "$@"; do
        if [[ "$tool" == nginx ]]; then
            command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
        else
            command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
        fi
    done
    if ((${#missing[@]})); then apt_install "${missing[@]}"; fi
    NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
}

# apt_install PACKAGE...: installs these Debian packages (through sudo when not root).
apt_install() {
    echo "installing: $*"
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

WORK="$(mktemp -d "/tmp/courier-bench.XXXXXX")"
NGINX_PID=""
cleanup() {
    if [[ -n "$NGINX_PID" ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
        kill "$NGINX_PID" 2>/dev/null || true
        wait "$NGINX_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_is_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=""
for _ in $(seq 1 50); do
    candidate=$((20000 + RANDOM % 30000))
    if port_is_free "$candidate"; then PORT="$candidate"; break; fi
done
[[ -n "$PORT" ]] || { echo "no free port found" >&2; exit 1; }

# forget_build_plan: SwiftPM keeps the list of Courier's source files (a path dependency of this package) in its
# cached build plan and does not notice files added to or removed from ../Sources; dropping the plan makes it look
# again, without rebuilding what is up to date.
forget_build_plan() {
    rm -f "$BENCH_DIR/.build/release.yaml" "$BENCH_DIR/.build/$(uname -m)-unknown-linux-gnu/release/description.json"
}

# start_nginx: runs nginx with $WORK/nginx.conf in the background and waits until it listens on $PORT.
start_nginx() {
    "$NGINX" -c "$WORK/nginx.conf" -p "$WORK/" &
    NGINX_PID=$!
    for _ in $(seq 1 100); do
        if ! port_is_free "$PORT"; then return 0; fi
        kill -0 "$NGINX_PID" 2>/dev/null || { echo "nginx did not start:" >&2; cat "$WORK/error.log" >&2 || true; exit 1; }
        sleep 0.05
    done
}

# nginx_temp_paths: the temp-path directives every config needs, inside $WORK.
nginx_temp_paths() {
    local kind
    for kind in client_body proxy fastcgi uwsgi scgi; do echo "    ${kind}_temp_path $WORK/temp/$kind;"; done
}

# build_bench: builds CourierBench in release mode and sets BIN to it.
build_bench() {
    echo "building CourierBench (release)…"
    forget_build_plan
    swift build -c release --package-path "$BENCH_DIR" --product CourierBench >/dev/null
    BIN="$(swift build -c release --package-path "$BENCH_DIR" --show-bin-path)/CourierBench"
}

# print_machine: the date, the cores and memory, and the load, for the report's header.
print_machine() {
    echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; nginx (1 worker) on the same cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
}

# measure COMMAND...: runs it and prints "<seconds> <peak RSS KiB>", then the value of each KEY=<n> it printed for
# the keys in $MEASURE_KEYS; the command prints its own time as seconds=<s>.
measure() {
    python3 - "$@" <<'PY'
import os, re, resource, subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
if out.returncode != 0:
    sys.stderr.write(out.stderr + out.stdout)
    sys.exit(out.returncode)
def value(key, default):
    match = re.search(key + r"=([0-9.]+)", out.stdout)
    return match.group(1) if match else default
fields = [value("seconds", "nan"), str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)]
fields += [value(key, "0") for key in os.environ.get("MEASURE_KEYS", "").split()]
print(" ".join(fields))
PY
}

# write_page: the 1,024-byte JSON page the GET benchmarks serve (a page of six user records, decoded into UserPage
# by every Swift client), at $WORK/www/1k.json, readable by nginx's worker (it may run as nobody).
write_page() {
    mkdir -p "$WORK/www" "$WORK/temp"
    chmod 755 "$WORK" "$WORK/www"
    printf '%s' '{"page":1,"per_page":6,"total":2140,"users":[{"id":1041,"name":"Ada Lovelace","username":"ada","email":"ada@example.com","active":true,"score":98.5,"roles":["admin","dev"],"created_at":"2024-01-15T09:30:00Z"},{"id":1042,"name":"Alan Turing","username":"aturing","email":"aturing@example.com","active":true,"score":97.25,"roles":["dev"],"created_at":"2024-02-03T14:12:45Z"},{"id":1043,"name":"Grace Hopper","username":"grace","email":"grace@example.com","active":false,"score":88.0,"roles":["user"],"created_at":"2024-03-21T08:05:10Z"},{"id":1044,"name":"Edsger Dijkstra","username":"ewd","email":"ewd@example.com","active":true,"score":91.75,"roles":["dev","ops"],"created_at":"2024-04-09T17:45:30Z"},{"id":1045,"name":"Barbara Liskov","username":"liskov","email":"liskov@example.com","active":true,"score":95.0,"roles":["ops"],"created_at":"2024-05-30T11:20:00Z"},{"id":1046,"name":"Donald Knuth","username":"dek","email":"dek@example.com","active":false,"score":99.9,"roles":["user"],"created_at":"2024-06-18T06:55:15Z"}]}' \
        >"$WORK/www/1k.json"
    chmod 644 "$WORK/www/1k.json"
}

# write_static_nginx_conf [LISTEN_OPTIONS] [SERVER_LINES] [MORE_SERVERS]: $WORK/nginx.conf for one nginx worker
# serving $WORK/www on 127.0.0.1:$PORT (plain HTTP/1.1 unless LISTEN_OPTIONS say `ssl`, `ssl http2`), keeping
# connections open for as many requests as a benchmark sends. Since nginx 1.19.7 keepalive_requests also caps the
# requests on one HTTP/2 connection (1,000 by default): past it nginx sends GOAWAY and the client has to reconnect.
# SERVER_LINES go into that server block (certificates), MORE_SERVERS after it.
write_static_nginx_conf() {
    cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    types { application/json json; }
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 120s;
    keepalive_requests 1000000;
$(nginx_temp_paths)
    server {
        listen 127.0.0.1:$PORT ${1:-};
${2:-}
        root $WORK/www;
        location / { }
    }
${3:-}
}
EOF
}

# whole_process COMMAND...: runs it and prints "<wall seconds> <CPU seconds>" for the whole process, start-up and
# set-up included: timed from outside, by no code of the process's own. Then what the command wrote on its standard
# output, for the caller to check. A command that fails has its output shown, and fails the caller.
whole_process() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter()
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
seconds = time.perf_counter() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
if out.returncode != 0:
    sys.stderr.write(out.stderr + out.stdout)
    sys.exit(out.returncode)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print(seconds, cpu)
print(out.stdout, end="")
PY
}

# serve_page: nginx serving the 1 KB page over plain HTTP/1.1 on $PORT; sets BASE_URL.
serve_page() {
    write_page
    write_static_nginx_conf
    start_nginx
    BASE_URL="http://127.0.0.1:$PORT/"
}

# bench_binary: sets BIN to $BENCH_BIN when given (a binary built elsewhere, for an A/B), else builds CourierBench.
bench_binary() {
    if [[ -n "${BENCH_BIN:-}" ]]; then
        BIN="$BENCH_BIN"
        echo "using $BIN (not rebuilt)"
    else
        build_bench
    fi
}
