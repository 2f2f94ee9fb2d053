#!/usr/bin/env bash
# make bench: installs the peers (nginx, vipsthumbnail, curl, a Python virtualenv with Pillow, requests and
# diskcache under .build/), builds the reproducible workload from ../shared/corpus/kodak, serves it with nginx
# on 127.0.0.1, and runs imago-bench in release mode: every comparison side by side in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/install-deps.sh nginx:/usr/sbin/nginx libvips-tools:/usr/bin/vipsthumbnail curl:/usr/bin/curl \
  libjpeg-turbo-progs:/usr/bin/djpeg pngquant:/usr/bin/pngquant \
  libjxl-tools:/usr/bin/djxl \
  libavif-bin:/usr/bin/avifdec libheif-examples:/usr/bin/heif-convert

CORPUS=${IMAGO_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS/kodak" ] || { echo "bench: $CORPUS/kodak is missing (../shared/corpus beside the project)" >&2; exit 1; }

VENV=$ROOT/.build/bench-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import PIL, diskcache, requests' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check pillow diskcache requests
fi
"$VENV/bin/python" -c 'import pillow_jxl' 2>/dev/null ||
  "$VENV/bin/pip" install -q --disable-pip-version-check pillow-jxl-plugin

# pillow-heif and pillow-avif-plugin for the AVIF/HEIC rows (optional: those rows say so when Pillow lacks them).
"$VENV/bin/python" -c 'import pillow_heif, pillow_avif' 2>/dev/null ||
  "$VENV/bin/pip" install -q --disable-pip-version-check pillow-heif pillow-avif-plugin ||
  echo "bench: pillow-heif / pillow-avif-plugin could not be installed" >&2

DATA=$ROOT/.build/bench-data
# The AVIF/HEIC rows' inputs: the 12 MP JPEG and a Kodak photo, encoded once with the reference encoders.
mkdir -p "$DATA/modern"
[ -s "$DATA/modern/photo12.avif" ] || avifenc -s 6 --min 24 --max 26 -j 2 "$CORPUS/formats/TestJFIF.jpg" "$DATA/modern/photo12.avif" >/dev/null
[ -s "$DATA/modern/photo12.heic" ] || heif-enc -q 80 "$CORPUS/formats/TestJFIF.jpg" -o "$DATA/modern/photo12.heic" >/dev/null
[ -s "$DATA/modern/kodak01.avif" ] || avifenc -s 6 --min 24 --max 26 -j 2 "$CORPUS/kodak/01.png" "$DATA/modern/kodak01.avif" >/dev/null
[ -s "$DATA/modern/kodak01.heic" ] || heif-enc -q 80 "$CORPUS/kodak/01.png" -o "$DATA/modern/kodak01.heic" >/dev/null
# The 12 MP photo with a 320 × 240 embedded thumbnail, as phones write them (the embedded-thumbnail rows).
[ -s "$DATA/modern/photo12-thumb.heic" ] ||
  heif-enc -q 80 -t 320 "$CORPUS/formats/TestJFIF.jpg" -o "$DATA/modern/photo12-thumb.heic" >/dev/null
"$VENV/bin/python" bench/make-gallery.py "$CORPUS/kodak" "$DATA/gallery"
# JPEG XL photos for `decode-jxl` (cjxl 0.7, distance 1, from pixels rather than JPEG recompression).
mkdir -p "$DATA/jxl"
[ -s "$DATA/jxl/photo-12mp-d1.jxl" ] ||
  cjxl "$CORPUS/formats/TestJFIF.jpg" "$DATA/jxl/photo-12mp-d1.jxl" -d 1 --lossless_jpeg=0 --quiet
[ -s "$DATA/jxl/kodim01-d1.jxl" ] || cjxl "$CORPUS/kodak/01.png" "$DATA/jxl/kodim01-d1.jxl" -d 1 --quiet
"$VENV/bin/python" bench/make-apng.py "$CORPUS/kodak" "$DATA/apng/kodak-8frames.png" >/dev/null

# nginx on a free loopback port, its files under .build/, stopped on exit.
NGINX_DIR=$ROOT/.build/bench-nginx
. "$ROOT/bench/common.sh"
PORT=$(free_port)
nginx_conf "$NGINX_DIR" 1 "listen 127.0.0.1:$PORT backlog=1024; root $DATA/gallery;"
nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR"
trap 'kill $(cat "$NGINX_DIR/nginx.pid" 2>/dev/null) 2>/dev/null || true' EXIT
wait_for "http://127.0.0.1:$PORT/jpeg/000.jpg"

# Issue 23's whole-process comparison: `imago fetch --resize 256x256` against bench/peer.py on the photos
# (scripts/bench.sh fetch-cli [ROUNDS]); see bench/fetch-vs-peer.py.
if [ "${1:-}" = "fetch-cli" ]; then
  swift build -c release -j 2 --product imago
  ls "$DATA/gallery/photos" | sed "s|^|http://127.0.0.1:$PORT/photos/|" > "$DATA/photos-urls.txt"
  "$VENV/bin/python" bench/fetch-vs-peer.py "$(swift build -c release --show-bin-path)/imago" "$VENV/bin/python" \
    "$ROOT/bench/peer.py" "$DATA/photos-urls.txt" "${2:-5}"
  exit 0
fi

# IMAGO_BENCH_BIN=path runs another build's imago-bench against the same data and peers (before/after tables).
BENCH_BIN=${IMAGO_BENCH_BIN:-}
if [ -z "$BENCH_BIN" ]; then
  swift build -c release -j 2 --product imago-bench
  BENCH_BIN="$(swift build -c release --show-bin-path)/imago-bench"
fi
export IMAGO_BENCH_BASE_URL="http://127.0.0.1:$PORT"
export IMAGO_BENCH_DATA="$DATA"
export IMAGO_BENCH_PYTHON="$VENV/bin/python"
export IMAGO_BENCH_PEER="$ROOT/bench/peer.py"
export IMAGO_CORPUS="$CORPUS"
"$BENCH_BIN" "$@"
