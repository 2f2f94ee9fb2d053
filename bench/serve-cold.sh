#!/usr/bin/env bash
# bench-serve.sh's cold imago row alone, RUNS times (default 6), each with a fresh `imago serve` over an empty cache
# directory, for finding where a slow run's extra CPU goes (BENCHMARKS.md, branch serve7). Needs the gallery and
# the venv that scripts/bench-serve.sh makes (run it once first). No thumbor, no warm rows.
# Per run, in .build/serve-cold/run-N/: wrk's RESULT line; /proc snapshots of imago serve before and after the run
# (per thread, sampled through the run by bench/serve-cold-threads.py since the pool's threads exit when idle: CPU,
# schedstat run/wait, voluntary/involuntary switches; the process's minor/major faults);
# /proc/stat and /proc/vmstat before and after; the codec floor (bench/serve-floor.c, one pass) just before and
# just after the run, as a clock of the machine's speed at that time. TOPDIR=1 and DELETE_BEFORE=1: see below.
# PERF=1 also records `perf record -g -a` (cpu-clock, 1 kHz, the whole machine: attached by pid, perf 6.1 spun in
# the kernel on both cores once the pool's threads exited) over the run, started with `chrt -o 0` (never under a
# real-time policy); `perf report --pid` picks imago serve out. IMAGO_BIN=PATH runs another build; SERVE_FORMAT=jpeg
# asks for JPEG outputs (default webp), SERVE_RESIZE=fill for fill (default fit), SERVE_SIZE=W:H another size (default
# 256:256). Old cache directories are moved aside and deleted only at the end (see bench-serve.sh: deletes just before
# a run cost imago 5-16 %).
# Run it without `chrt`, as bench-serve.sh runs (under `chrt -f 50` the kernel's real-time throttle adds stalls:
# BENCHMARKS.md, serve7). Prints one summary line per run (summarise with bench/serve-cold-summary.py).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-6}
DATA=$ROOT/.build/bench-data
OUT=${OUT:-$ROOT/.build/serve-cold}
[ -d "$DATA/gallery/jpeg" ] || { echo "serve-cold: run scripts/bench-serve.sh once first" >&2; exit 1; }
TRASH=$ROOT/.build/serve-cold-trash
mkdir -p "$TRASH"
[ ! -e "$OUT" ] || mv "$OUT" "$TRASH/out-$(date +%s%N)"
# Each run's cache folder gets a new name in CACHES; TOPDIR=1 marks CACHES `chattr +T` (ext4 then places each new
# folder in it as a top-level one, in a little-used block group: scripts/bench-serve.sh does so).
CACHES=$ROOT/.build/serve-cold-caches-$(date +%s%N)
mkdir -p "$CACHES"
[ "${TOPDIR:-0}" != 1 ] || chattr +T "$CACHES"
. "$ROOT/bench/common.sh"
ORIGIN=$(free_port); IMAGO=$(free_port)
IMAGO_PID=; PERF_PID=
cleanup() {
  [ -z "$PERF_PID" ] || kill -INT "$PERF_PID" 2>/dev/null || true
  [ -z "$IMAGO_PID" ] || kill "$IMAGO_PID" 2>/dev/null || true
  kill "$(cat "$OUT/nginx/nginx.pid" 2>/dev/null)" 2>/dev/null || true
}
trap cleanup EXIT
nginx_conf "$OUT/nginx" "${NGINX_WORKERS:-auto}" "listen 127.0.0.1:$ORIGIN backlog=1024; root $DATA/gallery;"
nginx -c "$OUT/nginx/nginx.conf" -p "$OUT/nginx"
"${CC:-cc}" -O2 -o "$OUT/serve-floor" bench/serve-floor.c -lturbojpeg -lwebp
if [ -z "${IMAGO_BIN:-}" ]; then
  swift build -c release -j 2 --product imago
  IMAGO_BIN="$(swift build -c release --show-bin-path)/imago"
fi
imago_paths "$ORIGIN" "$OUT/imago-paths"
wait_for "http://127.0.0.1:$ORIGIN/jpeg/000.jpg"

snapshot() {  # PID DIR: per-thread and process counters of PID, and the machine's, into DIR
  mkdir -p "$2"
  cp /proc/stat "$2/stat"; cp /proc/vmstat "$2/vmstat"; cp /proc/loadavg "$2/loadavg"
  cp "/proc/$1/stat" "$2/proc-stat"; cp "/proc/$1/status" "$2/proc-status"
  python3 bench/serve-cold-threads.py --once "$1" "$2"
}
floor_ms() { "$OUT/serve-floor" 256 80 1 "$DATA"/gallery/jpeg/*.jpg | sed -nE 's/^RESULT floor_ms=([0-9.]+).*/\1/p'; }

for run in $(seq "$RUNS"); do
  dir=$OUT/run-$run
  mkdir -p "$dir"
  floor_before=$(floor_ms)
  # DELETE_BEFORE=1: the previous run's cache is deleted right before this run (the harness's old habit).
  if [ "${DELETE_BEFORE:-0}" = 1 ] && [ -n "${previous:-}" ]; then rm -rf "$previous"; fi
  cache=$CACHES/cache-$run-$(date +%s%N)
  start_imago_serve "$IMAGO_BIN" "$IMAGO" "$cache" "$dir/imago.log" "$dir/imago.err"
  if [ "${PERF:-0}" = 1 ]; then
    chrt -o 0 perf record -q -g -F 1000 -e cpu-clock -a -o "$dir/perf.data" 2> "$dir/perf.err" &
    PERF_PID=$!
    sleep 1
  fi
  [ -z "${TRACE:-}" ] || mkdir -p "$dir/trace"
  snapshot "$IMAGO_PID" "$dir/before"
  chrt -o 0 python3 bench/serve-cold-threads.py "$IMAGO_PID" "$dir/threads" &
  SAMPLER_PID=$!
  # The sampler's start-up (a pyenv shim's bash scripts, then Python's imports) out of the run: started with it,
  # it shared the cores with the first renders and made them the slowest requests (BENCHMARKS.md, stop 46).
  sleep 1
  line=$(wrk -t32 -c32 -d"${DURATION:-15s}" --timeout 30s -s bench/serve-wrk.lua "http://127.0.0.1:$IMAGO" -- \
    "$OUT/imago-paths" once 32 ${TRACE:+"$dir/trace"} | grep '^RESULT')
  snapshot "$IMAGO_PID" "$dir/after"
  kill "$SAMPLER_PID"; wait "$SAMPLER_PID" || true
  if [ -n "$PERF_PID" ]; then kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true; PERF_PID=; fi
  kill "$IMAGO_PID"; wait "$IMAGO_PID" 2>/dev/null || true; IMAGO_PID=
  floor_after=$(floor_ms)
  echo "${line#RESULT } floor_before=$floor_before floor_after=$floor_after" > "$dir/result"
  python3 bench/serve-cold-summary.py "$dir"
  if [ "${DELETE_BEFORE:-0}" = 1 ]; then previous=$cache; else mv "$cache" "$TRASH/"; fi
done
rm -rf "$TRASH" "$CACHES"
