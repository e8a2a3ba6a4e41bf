#!/usr/bin/env bash
# tiercache-proxy against nginx's proxy_cache, in the same run, on 127.0.0.1.
#
#   Benchmarks/proxy-vs-nginx.sh [seconds per load, default 10] [connections, default 64] [rounds, default 3]
#
# Starts one origin (nginx serving static files with Cache-Control: max-age=3600), then in front
# of it nginx with proxy_cache (memory keys, disk cache in a temp dir, like a default setup) and
# tiercache-proxy (memory tier), and loads each with wrk for a cached 1 KiB and a cached 64 KiB
# response, alternating between the two for several rounds (this machine's speed drifts; the
# rounds share the drift). Prints the median requests/s and p99 latency side by side with the
# ratio of the medians. Run by hand, not in CI: it takes two to three minutes and needs
# nginx-light and wrk (installed when missing).
#
#   PROXY_PROFILE=FILE   afterwards, loads the proxy with the cached 1 KiB response once more under
#                        `perf record -g` (written to FILE) and prints where its time goes.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
connections=${2:-64}
rounds=${3:-3}

need=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

scripts/install-system-libraries
echo "building tiercache-proxy (release; several minutes the first time)..."
build_log=$(mktemp)
if ! swift build -c release --product tiercache-proxy > "$build_log" 2>&1; then cat "$build_log"; exit 1; fi
rm -f "$build_log"
proxy_bin=$(swift build -c release --show-bin-path)/tiercache-proxy

work=$(mktemp -d "${TMPDIR:-/tmp}/proxy-vs-nginx.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
origin_port=$(free_port); nginx_port=$(free_port); proxy_port=$(free_port)

mkdir -p "$work/www" "$work/cache" "$work/logs"
for size in 1024 65536; do
    python3 -c "import base64, os, sys; sys.stdout.write(base64.b64encode(os.urandom($size)).decode()[:$size])" > "$work/www/$((size / 1024))k"
done
# nginx's workers run as an unprivileged user: let them read the files and write the cache.
chmod 755 "$work" "$work/www" && chmod 644 "$work/www/"* && chmod 777 "$work/cache" "$work/logs"

cat > "$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/cache/body;
    proxy_temp_path $work/cache/proxy;
    fastcgi_temp_path $work/cache/fastcgi;
    uwsgi_temp_path $work/cache/uwsgi;
    scgi_temp_path $work/cache/scgi;
    proxy_cache_path $work/cache/zone keys_zone=bench:16m max_size=256m inactive=1h;
    upstream origin { server 127.0.0.1:$origin_port; keepalive 64; }
    server {
        listen 127.0.0.1:$origin_port;
        root $work/www;
        location / { add_header Cache-Control "max-age=3600"; }
    }
    server {
        listen 127.0.0.1:$nginx_port;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache bench;
            add_header X-Cache-Status \$upstream_cache_status;
        }
    }
}
CONF
"$nginx_bin" -c "$work/nginx.conf" -e "$work/logs/error.log"
"$proxy_bin" --listen "127.0.0.1:$proxy_port" --upstream "http://127.0.0.1:$origin_port" --memory 256MiB --log-level warning \
    > "$work/proxy.out" 2> "$work/proxy.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q "listening on port" "$work/proxy.out" && break; sleep 0.1; done
head -1 "$work/proxy.out"

# Prime both caches and check that the second request is a hit.
for path in 1k 64k; do
    for port in $nginx_port $proxy_port; do
        curl -s -o /dev/null "http://127.0.0.1:$port/$path"
        curl -s -D - -o /dev/null "http://127.0.0.1:$port/$path" | grep -iE "^(x-cache-status|cache-status):" | tr -d '\r' | sed "s|^|  :$port /$path  |" || echo "  :$port /$path  no cache status field"
    done
done

# wrk --latency prints "Requests/sec:" and a percentile table with a 99% row.
measure() {
    local output
    output=$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$1")
    local rps p99
    rps=$(awk '/Requests\/sec:/ {print $2}' <<<"$output")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$output")
    echo "$rps $p99"
}

median() { python3 -c 'import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
milliseconds() { python3 -c '
import sys
value = sys.argv[1]
for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
    if value.endswith(unit):
        print(float(value[: -len(unit)]) * factor)
        break' "$1"; }

printf '\n%-10s %16s %14s %16s %16s %8s\n' "response" "nginx req/s" "nginx p99 ms" "tiercache req/s" "tiercache p99 ms" "ratio"
for path in 1k 64k; do
    nginx_rps=(); nginx_p99=(); proxy_rps=(); proxy_p99=()
    for _ in $(seq 1 "$rounds"); do
        read -r rps p99 < <(measure "http://127.0.0.1:$nginx_port/$path"); nginx_rps+=("$rps"); nginx_p99+=("$(milliseconds "$p99")")
        read -r rps p99 < <(measure "http://127.0.0.1:$proxy_port/$path"); proxy_rps+=("$rps"); proxy_p99+=("$(milliseconds "$p99")")
    done
    n_rps=$(median "${nginx_rps[@]}"); p_rps=$(median "${proxy_rps[@]}")
    ratio=$(python3 -c "print(f'{$p_rps / $n_rps:.2f}x')")
    printf '%-10s %16.0f %14.2f %16.0f %16.2f %8s\n' "$path" "$n_rps" "$(median "${nginx_p99[@]}")" "$p_rps" "$(median "${proxy_p99[@]}")" "$ratio"
    echo "           rounds: nginx ${nginx_rps[*]}; tiercache ${proxy_rps[*]}"
done
echo "(wrk -t2 -c$connections -d${duration}s on 127.0.0.1, $(nproc) cores, medians of $rounds alternating rounds; ratio = tiercache-proxy / nginx requests/s)"

if [ -n "${PROXY_PROFILE:-}" ]; then
    command -v perf >/dev/null || { echo "perf is not installed; no profile" >&2; exit 0; }
    wrk -t2 -c"$connections" -d"$((duration + 2))s" "http://127.0.0.1:$proxy_port/1k" > /dev/null &
    load=$!
    sleep 1
    perf record -F 4000 -g -p "${pids[0]}" -o "$PROXY_PROFILE" -- sleep "$duration" 2> /dev/null
    wait "$load" || true
    echo "== where tiercache-proxy's time goes, cached 1 KiB (perf record -g; $PROXY_PROFILE) =="
    perf report -i "$PROXY_PROFILE" --no-children --sort dso 2> /dev/null | grep -v '^#' | grep '%' | grep -v -- '--' | head -8
    perf report -i "$PROXY_PROFILE" --no-children --sort symbol -g none 2> /dev/null | grep -v '^#' | grep '%' | head -30 | cut -c1-150
fi
