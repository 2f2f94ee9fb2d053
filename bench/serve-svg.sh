#!/usr/bin/env bash
# What keeping SVG children costs or saves `imago serve`: BASELINE_BIN (a build that starts an `imago svg-render`
# child for every drawing) against IMAGO_BIN (one that keeps up to a child a core between drawings), alternating,
# same machine, same minutes.
# Sources: the W3C logo (paths, Tests/Fuzz/svg) and a small document with a gradient, a blur filter and text
# (fontconfig), written here, served by nginx; each drawn at 60 widths (64, 68, … 300 px) as PNG, every output new: 120
# drawings a run. Each run from a fresh server over an empty cache. Load: wrk, each path once, CONNECTIONS
# (default 8) at a time. Per run: req/s, p99, and CPU ms per request of the server with its children
# (/proc/PID/stat utime + stime + cutime + cstime, and utime + stime of the children still running, read before
# the server stops). RUNS (default 4) pairs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/install-deps.sh nginx:/usr/sbin/nginx wrk:/usr/bin/wrk curl:/usr/bin/curl
. "$ROOT/bench/common.sh"
[ -n "${BASELINE_BIN:-}" ] || { echo "serve-svg: set BASELINE_BIN to the imago build to compare with" >&2; exit 1; }
serve_bench_setup serve-svg
cp Tests/Fuzz/svg/w3c-logo.svg "$WORK/origin/"
cat > "$WORK/origin/text-filter.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">
  <defs><filter id="b"><feGaussianBlur stdDeviation="1"/></filter><linearGradient id="g"><stop offset="0"
  stop-color="red"/><stop offset="1" stop-color="blue"/></linearGradient></defs>
  <rect width="20" height="20" fill="url(#g)" filter="url(#b)"/><text x="22" y="15" font-size="10">Ab</text>
</svg>
SVG
nginx_conf "$WORK/nginx" 1 "listen 127.0.0.1:$ORIGIN; root $WORK/origin; types { image/svg+xml svg; }"
nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx"
wait_for "http://127.0.0.1:$ORIGIN/w3c-logo.svg"
: > "$WORK/paths"
for width in $(seq 64 4 300); do
  for file in w3c-logo.svg text-filter.svg; do
    echo "/_/rs:fit:$width:0/el:1/f:png/plain/http://127.0.0.1:$ORIGIN/$file" >> "$WORK/paths"
  done
done
CONNECTIONS=${CONNECTIONS:-8}
echo "# $(date -u +%FT%TZ) $(nproc) cores; 120 SVG drawings (2 documents x 60 widths) -> PNG, $CONNECTIONS connections" \
  | tee "$WORK/results.txt"
for run in $(seq "${RUNS:-4}"); do
  for mode in baseline kept; do
    bin=$IMAGO_BIN
    [ "$mode" = kept ] || bin=$BASELINE_BIN
    serve_paths_once "$bin" "$IMAGO" "$WORK/cache-$mode-$run" "$WORK/paths" 120 "$mode run=$run" "$WORK/results.txt"
  done
done
