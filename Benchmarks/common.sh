# Shared by run.sh and transfers.sh: tools, a work folder, a free port and an nginx that is stopped on exit.
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
    if ((${#missing[@]})); then
        echo "installing: ${missing[*]}"
        local sudo=""
        [[ $(id -u) -eq 0 ]] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
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
