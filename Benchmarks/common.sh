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
