#!/usr/bin/env bash
# Crash consistency at reliability scale: DiskCacheProcessTests with 60 SIGKILL rounds of `imago-cache-stress fill`
# (reopen → no corrupt entry, every entry byte-exact per CachePayload, size accounting == files) and two
# `imago-cache-stress share` processes on one cache for 60 s (no corruption, limit held). Override with
# IMAGO_KILL_ROUNDS / IMAGO_SHARE_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests -j 2
IMAGO_KILL_ROUNDS=${IMAGO_KILL_ROUNDS:-60} IMAGO_SHARE_SECONDS=${IMAGO_SHARE_SECONDS:-60} \
  swift test --skip-build --filter DiskCacheProcessTests 2>&1 | tee .build/crash-consistency.log | \
  grep -E "crash-consistency|passed|failed|error" 
