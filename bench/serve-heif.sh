#!/usr/bin/env bash
# What decoding HEIF sources and encoding HEIC outputs in child processes costs `imago serve` (`ChildProcessDecoder`,
# `imago heif-decode`; `ChildProcessEncoder`, `imago heic-encode`) against doing both in the server
# (`--heif-in-process`), alternating, same machine, same minutes.
# Sources: the 24 Kodak photos (768x512) as HEIC at quality 80, written by `imago fetch --format heic` from an nginx
# origin; each served at 5 widths (64, 128, 192, 256, 320 px, WebP q80), every output new: 120 decodes a run (row
# "decode"); the 24 Kodak PNGs at the same widths as HEIC q80: 120 encodes a run (row "encode"). Each run from a
# fresh server over an empty cache. Load: wrk, each path once, CONNECTIONS (default 8) at a time.
# Per run: req/s, p99, and CPU ms per request of the server with its children (/proc/PID/stat utime + stime + cutime
# + cstime, and utime + stime of the children still running, read before the server stops). RUNS (default 4) pairs.
# IMAGO_BIN=PATH runs another build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/install-deps.sh nginx:/usr/sbin/nginx wrk:/usr/bin/wrk curl:/usr/bin/curl
CORPUS=${IMAGO_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS/kodak" ] || { echo "serve-heif: $CORPUS/kodak is missing" >&2; exit 1; }
. "$ROOT/bench/common.sh"
if [ -z "${IMAGO_BIN:-}" ]; then
  swift build -c release -j 2 --product imago
  IMAGO_BIN="$(swift build -c release --show-bin-path)/imago"
fi
WORK=$ROOT/.build/serve-heif
rm -rf "$WORK"
mkdir -p "$WORK/heic"
ORIGIN=$(free_port)
IMAGO=$(free_port)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  kill "$(cat "$WORK/nginx/nginx.pid" 2>/dev/null)" 2>/dev/null || true
}
trap cleanup EXIT
nginx_conf "$WORK/nginx" 1 "listen 127.0.0.1:$ORIGIN; root $WORK/origin;" 
mkdir -p "$WORK/origin"
ln -s "$CORPUS/kodak" "$WORK/origin/kodak"
ln -s "$WORK/heic" "$WORK/origin/heic"
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
wait_for "http://127.0.0.1:$ORIGIN/kodak/01.png"
# The sources, once: each Kodak PNG as HEIC (names kept, extension .heic).
for i in $(seq -f %02g 1 24); do echo "http://127.0.0.1:$ORIGIN/kodak/$i.png"; done > "$WORK/kodak-urls"
"$IMAGO_BIN" fetch --list "$WORK/kodak-urls" --format heic --quality 80 --out "$WORK/heic" \
  --cache-dir "$WORK/fetch-cache" > /dev/null
[ "$(ls "$WORK/heic" | wc -l)" = 24 ] || { echo "serve-heif: expected 24 HEIC sources in $WORK/heic" >&2; exit 1; }
: > "$WORK/decode-paths"
: > "$WORK/encode-paths"
for width in 64 128 192 256 320; do
  for file in "$WORK"/heic/*; do
    echo "/_/rs:fit:$width:0/q:80/f:webp/plain/http://127.0.0.1:$ORIGIN/heic/$(basename "$file")" >> "$WORK/decode-paths"
  done
  for i in $(seq -f %02g 1 24); do
    echo "/_/rs:fit:$width:0/q:80/f:heic/plain/http://127.0.0.1:$ORIGIN/kodak/$i.png" >> "$WORK/encode-paths"
  done
done
cpu_ticks() {  # utime + stime + cutime + cstime of process $1, plus utime + stime of its children still running
  local pid=$1 total
  total=$(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pid/stat")
  for stat in /proc/[0-9]*/stat; do
    awk -v parent="$pid" '{ sub(/.*\) /, ""); if ($2 == parent) print $12 + $13 }' "$stat" 2>/dev/null
  done | awk -v t="$total" '{ t += $1 } END { print t }'
}
CONNECTIONS=${CONNECTIONS:-8}
echo "# $(date -u +%FT%TZ) $(nproc) cores; 120 HEIC decodes (24 Kodak x 5 widths) -> WebP, 120 PNG -> HEIC encodes," \
  "$CONNECTIONS connections" \
  | tee "$WORK/results.txt"
for run in $(seq "${RUNS:-4}"); do
  for row in decode encode; do
    for mode in child in-process; do
      flags=""
      [ "$mode" = child ] || flags="--heif-in-process"
      cache=$WORK/cache-$mode-$run
      IMAGO_ARGS=$flags start_imago_serve "$IMAGO_BIN" "$IMAGO" "$cache" /dev/null "$WORK/imago.err"
      PIDS+=("$IMAGO_PID")
      before=$(cpu_ticks "$IMAGO_PID")
      line=$(wrk -t"$CONNECTIONS" -c"$CONNECTIONS" -d20s --timeout 15s -s bench/serve-wrk.lua \
        "http://127.0.0.1:$IMAGO" -- "$WORK/$row-paths" once "$CONNECTIONS" | grep '^RESULT')
      after=$(cpu_ticks "$IMAGO_PID")
      echo "$line" | grep -q ' requests=120 errors=0 ' || { echo "serve-heif: $row $mode run $run: $line" >&2; exit 1; }
      echo "$row $mode run=$run ${line#RESULT } cpu_ms_per_request=$(awk -v a="$before" -v b="$after" \
        -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) * 1000 / hz / 120 }')" | tee -a "$WORK/results.txt"
      kill "$IMAGO_PID"
      wait "$IMAGO_PID" 2>/dev/null || true
      rm -rf "$cache"
    done
  done
done
