#!/usr/bin/env bash
# make bench-redis: the shared Redis tier's rows (issue 21), side by side in one run: a 200 KB get through
# RedisCache vs redis-py (installed into a virtualenv under .build/), a new process warm from Redis vs warm from
# its local disk, and a fleet of three imago serve processes on 300 requests. Release build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
bash scripts/install-deps.sh
CORPUS=${IMAGO_CORPUS:-$ROOT/../shared/corpus}
[ -d "$CORPUS/kodak" ] || { echo "bench-redis: $CORPUS/kodak is missing (../shared/corpus beside the project)" >&2; exit 1; }
VENV=$ROOT/.build/bench-redis-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import redis' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check redis
fi
JOBS=${JOBS:-2}
swift build -c release -j "$JOBS" --product imago
swift build -c release -j "$JOBS" --product imago-redis-bench
BIN=$(swift build -c release --show-bin-path)
# The get row's transport floor: a C client with no library (write, poll, reads).
CC=${CC:-$(command -v cc || command -v clang)}
"$CC" -O2 -o "$ROOT/.build/redis-get-floor" bench/redis-get-floor.c
"${IMAGO_REDIS_BENCH_BIN:-$BIN/imago-redis-bench}" --python "$VENV/bin/python" --script bench/redis-get.py \
  --floor "$ROOT/.build/redis-get-floor" --corpus "$CORPUS/kodak" --imago "$BIN/imago" "$@"
