#!/usr/bin/env bash
# make bench-serve: `imago serve` against thumbor (PyPI, its default PIL engine) and nginx, side by side in one
# run. Origin: nginx serving the Kodak-derived 500-JPEG gallery on 127.0.0.1. Output: 256-px WebP (fit). Load:
# wrk from Debian, 32 connections.
#   cold: every one of the 500 URLs once (32 threads x 1 connection), fresh caches: throughput and p99;
#   warm: imago with every output cached vs nginx serving the same output bytes as static files, 10 s each;
#   peak RSS (VmHWM) of imago serve after the cold run; CPU (user + system, from /proc) of each server per cold
#   image. Neither server writes an access log (nginx: access_log off; imago: --log-format off; thumbor: -l error).
#   cold-ratio: imago's cold throughput and p99 over thumbor's, the round's two goals (>= 3, <= 1/3). thumbor runs
#   as shipped: its default engine and its default storage (file_storage: each fetched original kept on disk,
#   as imago's disk cache keeps it), in a new folder each round. cold-thumbor-nostore and cold-ratio-nostore are
#   the same row with thumbor's no_storage (it writes no file; the configuration of this script before stop 24).
#   codec-floor: after thumbor's cold row, in the same round, bench/serve-floor.c (one thread, no server) times
#   only the codec work the row needs at thumbor's encoder settings: each JPEG's DCT-scaled decode and the WebP
#   encode (q80, method 4) of its 256-px fit; best_ratio = (cores x 1000 / floor ms) / thumbor's req/s is the most
#   any server could reach against thumbor on this machine if all its cores did nothing but those codecs.
# PERF_DIR=DIR records `perf record -g -a` (cpu-clock, 1 kHz, perf at normal priority) over each imago cold row
# into DIR/cold-imago-TIME-pidPID.data (read it with bench/serve-cold-perf.py FILE PID).
# ROUNDS=N (default 1) repeats every row N times, each round with a fresh imago serve and empty caches, and
# prints the load average before each round.
# Prints one RESULT line per row and writes .build/bench-serve/results.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/install-deps.sh nginx:/usr/sbin/nginx wrk:/usr/bin/wrk curl:/usr/bin/curl

CORPUS=${IMAGO_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS/kodak" ] || { echo "bench-serve: $CORPUS/kodak is missing" >&2; exit 1; }
VENV=$ROOT/.build/bench-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import PIL, thumbor' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check pillow diskcache requests thumbor
fi
DATA=$ROOT/.build/bench-data
"$VENV/bin/python" bench/make-gallery.py "$CORPUS/kodak" "$DATA/gallery"

WORK=$ROOT/.build/bench-serve
# Old caches are moved aside and deleted only after thumbor's cold row, >= 40 s before imago's next cold row. This
# VM's root file system is ext4 without a journal: there, creating a file skips (one buffer-cache lookup each) every
# free inode of its block group deleted in the last 5 s, or in the last 305 s while that inode-table block is still
# dirty, so deleting the previous round's ~1,500 cache files just before a cold run made each of imago's file
# creates scan them: 5-11 % of imago's CPU in the kernel's find_inode_bit (BENCHMARKS.md, branch serve5). That cost
# was the harness's, not the servers'.
TRASH=$ROOT/.build/bench-serve-trash
discard() { [ ! -e "$1" ] || { mkdir -p "$TRASH" && mv "$1" "$TRASH/$(date +%s%N)"; }; }
discard "$WORK"
# imago's cache folder is made, under a new name each round, in CACHES, marked `chattr +T`: ext4 then places each
# new folder in it as it places a top-level one, in a little-used block group picked from its name, away from the
# inodes freed by earlier rounds (imago-bench's cold pipeline rounds do the same). With the folder in the work
# folder, every round's cache landed in the same block group as the previous rounds' deleted ones, and the scan
# above grew with them: 7-27 % of imago's CPU at 1-4 rounds' deletes, 0 with the flag (BENCHMARKS.md, branch
# serve7). On another file system chattr fails and the folder is placed by its default.
CACHES=$ROOT/.build/bench-serve-caches
mkdir -p "$CACHES"
chattr +T "$CACHES" 2> /dev/null || echo "bench-serve: chattr +T $CACHES failed; cache folders placed by default" >&2
for old in "$CACHES"/*; do discard "$old"; done
IMAGO_CACHE=
mkdir -p "$WORK/static" "$WORK/thumbor"
THUMBOR_STORE=
. "$ROOT/bench/common.sh"
ORIGIN=$(free_port); STATIC=$(free_port); IMAGO=$(free_port); THUMBOR=$(free_port); THUMBOR_NS=$(free_port)
PIDS=()
ROUNDS=${ROUNDS:-1}
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  kill "$(cat "$WORK/nginx/nginx.pid" 2>/dev/null)" 2>/dev/null || true
}
trap cleanup EXIT

# One nginx worker per core (NGINX_WORKERS overrides): nginx serves the warm row with every core; imago serve
# renders with every core and answers the warm row on its one polling thread (--threads in IMAGO_ARGS for more).
nginx_conf "$WORK/nginx" "${NGINX_WORKERS:-auto}" "listen 127.0.0.1:$ORIGIN backlog=1024; root $DATA/gallery;" \
  "listen 127.0.0.1:$STATIC backlog=1024; root $WORK/static;"
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
"${CC:-cc}" -O2 -o "$WORK/serve-floor" bench/serve-floor.c -lturbojpeg -lwebp

# IMAGO_BIN=PATH runs another build of imago (e.g. a base commit's, for an A/B), IMAGO_LOG=json|text its log.
if [ -z "${IMAGO_BIN:-}" ]; then
  swift build -c release -j 2 --product imago
  IMAGO_BIN="$(swift build -c release --show-bin-path)/imago"
fi
start_imago() {  # a fresh imago serve over an empty cache directory
  [ -z "$IMAGO_CACHE" ] || discard "$IMAGO_CACHE"
  IMAGO_CACHE=$CACHES/imago-$(date +%s%N)
  start_imago_serve "$IMAGO_BIN" "$IMAGO" "$IMAGO_CACHE" /dev/null "$WORK/imago.err"
  PIDS+=("$IMAGO_PID")
}
stop_imago() { kill "$IMAGO_PID" 2>/dev/null || true; wait "$IMAGO_PID" 2>/dev/null || true; }
field() {  # ROW KEY: the value of KEY in the last line of row ROW so far
  grep "^$1 " "$WORK/results.txt" | tail -1 | sed -E "s/.* $2=([0-9.]+).*/\\1/"
}
cpu_seconds() {  # user + system CPU seconds of process $1 so far
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"
}
start_imago

# Two thumbors, both fresh each round: "file" at its defaults (file_storage in a new folder in CACHES, so that its
# files get the placement imago's get), "none" with no_storage. One thumbor process each, its default.
start_thumbor() {  # PORT NAME STORAGE_SETTING...: a fresh thumbor on PORT, its config in thumbor/NAME; sets STARTED_PID
  local folder=$WORK/thumbor/$2 port=$1
  shift 2
  mkdir -p "$folder"
  printf '%s\n' "ALLOW_UNSAFE_URL = True" "LOADER = 'thumbor.loaders.http_loader'" "$@" "RESULT_STORAGE = None" \
    "QUALITY = 80" > "$folder/thumbor.conf"
  "$VENV/bin/thumbor" --port "$port" --ip 127.0.0.1 -c "$folder/thumbor.conf" -l error >> "$WORK/thumbor.log" 2>&1 &
  STARTED_PID=$!
  PIDS+=("$STARTED_PID")
}
start_thumbors() {
  [ -z "$THUMBOR_STORE" ] || discard "$THUMBOR_STORE"
  THUMBOR_STORE=$CACHES/thumbor-$(date +%s%N)
  start_thumbor "$THUMBOR" file "STORAGE = 'thumbor.storages.file_storage'" "FILE_STORAGE_ROOT_PATH = '$THUMBOR_STORE'"
  THUMBOR_PID=$STARTED_PID
  start_thumbor "$THUMBOR_NS" none "STORAGE = 'thumbor.storages.no_storage'"
  THUMBOR_NS_PID=$STARTED_PID
  wait_for "http://127.0.0.1:$THUMBOR/healthcheck"
  wait_for "http://127.0.0.1:$THUMBOR_NS/healthcheck"
}
stop_thumbors() {
  kill "$THUMBOR_PID" "$THUMBOR_NS_PID" 2>/dev/null || true
  wait "$THUMBOR_PID" "$THUMBOR_NS_PID" 2>/dev/null || true
}
wait_for "http://127.0.0.1:$ORIGIN/jpeg/000.jpg"

imago_paths "$ORIGIN" "$WORK/imago-paths"
: > "$WORK/thumbor-paths"; : > "$WORK/static-paths"
for i in $(seq -f %03g 0 499); do
  echo "/unsafe/fit-in/256x256/filters:format(webp):quality(80)/127.0.0.1:$ORIGIN/jpeg/$i.jpg" >> "$WORK/thumbor-paths"
  echo "/$i.webp" >> "$WORK/static-paths"
done

# A "once" row ends when its last thread has its answer, but wrk itself sleeps out -d before it prints: 30 s (the
# slowest cold row seen took 7 s; a row cut short shows fewer than 500 requests and fails the script).
run() {  # NAME URL PATHS MODE THREADS CONNECTIONS [DURATION]
  local line
  line=$(wrk -t"$5" -c"$6" -d"${7:-30s}" --timeout 30s -s bench/serve-wrk.lua "$2" -- "$3" "$4" "$5" | grep '^RESULT')
  echo "$1 ${line#RESULT }" | tee -a "$WORK/results.txt"
  if [ "$4" = once ] && ! echo "$line" | grep -q ' requests=500 errors=0 '; then
    echo "bench-serve: $1 did not answer all 500 requests without errors within its duration" >&2
    exit 1
  fi
}

echo "# $(date -u +%FT%TZ) $(nproc) cores; 500 JPEGs -> 256-px WebP, 32 connections; $ROUNDS round(s)" \
  | tee "$WORK/results.txt"
for round in $(seq "$ROUNDS"); do
  [ "$round" = 1 ] || start_imago
  echo "# round $round, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$WORK/results.txt"
  before=$(cpu_seconds "$IMAGO_PID")
  if [ -n "${PERF_DIR:-}" ]; then  # a profile of the whole machine over imago's cold row, perf at normal priority
    mkdir -p "$PERF_DIR"
    chrt -o 0 perf record -q -g -a -F 1000 -e cpu-clock -o "$PERF_DIR/cold-imago-$(date +%s)-pid$IMAGO_PID.data" \
      2> /dev/null &
    PERF_PID=$!
    sleep 1
  fi
  run cold-imago "http://127.0.0.1:$IMAGO" "$WORK/imago-paths" once 32 32
  echo "imago-cpu-ms-per-image $(awk -v a="$before" -v b="$(cpu_seconds "$IMAGO_PID")" 'BEGIN { printf "%.2f", (b - a) * 2 }')" \
    | tee -a "$WORK/results.txt"
  [ -z "${PERF_DIR:-}" ] || { kill -INT "$PERF_PID"; wait "$PERF_PID" || true; }
  echo "imago-peak-rss-mb $(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$IMAGO_PID/status")" \
    | tee -a "$WORK/results.txt"
  start_thumbors
  imago_rps=$(field cold-imago rps); imago_p99=$(field cold-imago p99_ms)
  for row in cold-thumbor cold-thumbor-nostore; do
    pid=$THUMBOR_PID; port=$THUMBOR; ratio=cold-ratio
    [ "$row" = cold-thumbor ] || { pid=$THUMBOR_NS_PID; port=$THUMBOR_NS; ratio=cold-ratio-nostore; }
    before=$(cpu_seconds "$pid")
    run "$row" "http://127.0.0.1:$port" "$WORK/thumbor-paths" once 32 32
    echo "${row#cold-}-cpu-ms-per-image $(awk -v a="$before" -v b="$(cpu_seconds "$pid")" 'BEGIN { printf "%.2f", (b - a) * 2 }')" \
      | tee -a "$WORK/results.txt"
    thumbor_rps=$(field "$row" rps); thumbor_p99=$(field "$row" p99_ms)
    echo "$ratio rps=$(awk -v a="$imago_rps" -v b="$thumbor_rps" 'BEGIN { printf "%.2f", a / b }')" \
      "p99=$(awk -v a="$imago_p99" -v b="$thumbor_p99" 'BEGIN { printf "%.3f", a / b }')" | tee -a "$WORK/results.txt"
  done
  stored=$(find "$THUMBOR_STORE" -type f | wc -l)
  echo "thumbor-stored-files $stored" | tee -a "$WORK/results.txt"
  [ "$stored" = 500 ] || { echo "bench-serve: thumbor's file storage kept $stored originals, not 500" >&2; exit 1; }
  stop_thumbors
  rm -rf "$TRASH"
  thumbor_rps=$(field cold-thumbor rps)
  floor=$("$WORK/serve-floor" 256 80 "${FLOOR_PASSES:-3}" "$DATA"/gallery/jpeg/*.jpg | grep '^RESULT')
  floor_ms=$(echo "$floor" | sed -E 's/.*floor_ms=([0-9.]+).*/\1/')
  echo "codec-floor ${floor#RESULT } cores=$(nproc)" \
    "floor_rps=$(awk -v f="$floor_ms" -v n="$(nproc)" 'BEGIN { printf "%.1f", n * 1000 / f }')" \
    "best_ratio=$(awk -v f="$floor_ms" -v n="$(nproc)" -v t="$thumbor_rps" 'BEGIN { printf "%.2f", n * 1000 / f / t }')" \
    | tee -a "$WORK/results.txt"
  # The same output bytes as static files for nginx.
  while read -r path; do
    i=$(basename "$path" .jpg)
    curl -sf -o "$WORK/static/$i.webp" "http://127.0.0.1:$IMAGO$path"
  done < "$WORK/imago-paths"
  echo "imago-output-md5 $(cd "$WORK/static" && md5sum ./*.webp | md5sum | cut -c1-32) (md5 of the 500 outputs' md5 list)" \
    | tee -a "$WORK/results.txt"
  run warm-imago "http://127.0.0.1:$IMAGO" "$WORK/imago-paths" loop 2 32 10s
  run warm-nginx "http://127.0.0.1:$STATIC" "$WORK/static-paths" loop 2 32 10s
  stop_imago
done
