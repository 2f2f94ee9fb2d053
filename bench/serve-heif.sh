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
serve_bench_setup serve-heif
mkdir -p "$WORK/heic"
nginx_conf "$WORK/nginx" 1 "listen 127.0.0.1:$ORIGIN; root $WORK/origin;"
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
CONNECTIONS=${CONNECTIONS:-8}
echo "# $(date -u +%FT%TZ) $(nproc) cores; 120 HEIC decodes (24 Kodak x 5 widths) -> WebP, 120 PNG -> HEIC encodes," \
  "$CONNECTIONS connections" \
  | tee "$WORK/results.txt"
for run in $(seq "${RUNS:-4}"); do
  for row in decode encode; do
    for mode in child in-process; do
      flags=""
      [ "$mode" = child ] || flags="--heif-in-process"
      IMAGO_ARGS=$flags serve_paths_once "$IMAGO_BIN" "$IMAGO" "$WORK/cache-$mode-$run" "$WORK/$row-paths" 120 \
        "$row $mode run=$run" "$WORK/results.txt"
    done
  done
done
