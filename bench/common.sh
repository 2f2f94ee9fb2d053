# Sourced by the bench scripts (scripts/bench.sh, scripts/bench-serve.sh, bench/serve-cold.sh): the one nginx
# configuration and the helpers they share.
# nginx_conf DIR WORKERS SERVER... writes DIR/nginx.conf (pid, logs and temporary files under DIR, no access log,
# sendfile, 100,000 requests per keep-alive connection, the image types the benches serve) with one `server { … }`
# line per SERVER argument, e.g. "listen 127.0.0.1:8080 backlog=1024; root /srv/images;".
nginx_conf() {
  local dir=$1 workers=$2 server
  shift 2
  mkdir -p "$dir/logs" "$dir/tmp"
  {
    cat <<CONF
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
daemon on;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  types { image/jpeg jpg; image/png png; image/webp webp; image/gif gif; }
CONF
    for server in "$@"; do echo "  server { $server }"; done
    echo "}"
  } > "$dir/nginx.conf"
}

# free_port: a TCP port on 127.0.0.1 nothing listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# wait_for URL: until URL answers 2xx, at most 20 s (then the first request of the row will fail loudly).
wait_for() { for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return; sleep 0.1; done; }

# imago_paths ORIGIN FILE: the cold row's 500 unsigned imgproxy paths of the gallery's JPEGs on 127.0.0.1:ORIGIN,
# one per line: ${SERVE_RESIZE:-fit} into ${SERVE_SIZE:-256:256} (width:height), ${SERVE_FORMAT:-webp} at q80.
imago_paths() {
  for i in $(seq -f %03g 0 499); do
    echo "/_/rs:${SERVE_RESIZE:-fit}:${SERVE_SIZE:-256:256}/q:80/f:${SERVE_FORMAT:-webp}/plain/http://127.0.0.1:$1/jpeg/$i.jpg"
  done > "$2"
}

# start_imago_serve BIN PORT CACHE_DIR STDOUT STDERR: `BIN serve` on 127.0.0.1:PORT over CACHE_DIR with the benches'
# flags (unsigned URLs, loopback origins, access log ${IMAGO_LOG:-off}), waits for /healthz and sets IMAGO_PID.
start_imago_serve() {
  "$1" serve --listen "127.0.0.1:$2" --unsigned --allow-private --cache-dir "$3" ${IMAGO_ARGS:-} \
    --log-format "${IMAGO_LOG:-off}" > "$4" 2>> "$5" &
  IMAGO_PID=$!
  wait_for "http://127.0.0.1:$2/healthz"
}

# server_cpu_ticks PID: clock ticks of CPU that process PID and its children used: its utime + stime + cutime +
# cstime (children it reaped), plus utime + stime of its children still running.
server_cpu_ticks() {
  local pid=$1 total
  total=$(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pid/stat")
  for stat in /proc/[0-9]*/stat; do
    awk -v parent="$pid" '{ sub(/.*\) /, ""); if ($2 == parent) print $12 + $13 }' "$stat" 2>/dev/null
  done | awk -v t="$total" '{ t += $1 } END { print t }'
}

# serve_paths_once BIN PORT CACHE PATHS COUNT LABEL RESULTS: a fresh `BIN serve` over CACHE (start_imago_serve,
# with IMAGO_ARGS), each of the COUNT paths in PATHS requested once by wrk, ${CONNECTIONS:-8} at a time; appends
# "LABEL <wrk's RESULT fields> cpu_ms_per_request=N" (the server's and its children's CPU) to RESULTS and prints
# it; exits unless all COUNT answered 2xx/3xx; then stops the server and removes CACHE.
serve_paths_once() {
  local bin=$1 port=$2 cache=$3 paths=$4 count=$5 label=$6 results=$7 connections=${CONNECTIONS:-8}
  local before after line
  start_imago_serve "$bin" "$port" "$cache" /dev/null "$cache.err"
  before=$(server_cpu_ticks "$IMAGO_PID")
  line=$(wrk -t"$connections" -c"$connections" -d20s --timeout 15s -s bench/serve-wrk.lua \
    "http://127.0.0.1:$port" -- "$paths" once "$connections" | grep '^RESULT')
  after=$(server_cpu_ticks "$IMAGO_PID")
  kill "$IMAGO_PID"
  wait "$IMAGO_PID" 2>/dev/null || true
  echo "$line" | grep -q " requests=$count errors=0 " || { echo "$label: $line (see $cache.err)" >&2; exit 1; }
  echo "$label ${line#RESULT } cpu_ms_per_request=$(awk -v a="$before" -v b="$after" -v hz="$(getconf CLK_TCK)" \
    -v n="$count" 'BEGIN { printf "%.2f", (b - a) * 1000 / hz / n }')" | tee -a "$results"
  rm -rf "$cache"
}

# serve_bench_setup NAME: how a bench of `imago serve` against an nginx origin starts: IMAGO_BIN (this tree's
# release build unless set), a fresh WORK=.build/NAME with WORK/origin, free ports ORIGIN and IMAGO, and a trap
# that stops the server and the nginx of WORK/nginx on exit.
serve_bench_setup() {
  if [ -z "${IMAGO_BIN:-}" ]; then
    swift build -c release -j 2 --product imago
    IMAGO_BIN="$(swift build -c release --show-bin-path)/imago"
  fi
  WORK=$PWD/.build/$1
  rm -rf "$WORK"
  mkdir -p "$WORK/origin"
  ORIGIN=$(free_port)
  IMAGO=$(free_port)
  trap 'kill "${IMAGO_PID:-}" 2>/dev/null || true; kill "$(cat "$WORK/nginx/nginx.pid" 2>/dev/null)" 2>/dev/null || true' EXIT
}
