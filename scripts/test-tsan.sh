#!/usr/bin/env bash
# The suite under ThreadSanitizer (make test-tsan; CI's third step). Serial, like make test.
# A ThreadSanitizer report fails at once. A test that fails *without* any report is run once more on its own:
# under TSan everything runs 5-10x slower, and a few tests that set up races with real threads (previews,
# held stores, loopback timeouts) can lose their timing; a test that fails twice fails the run.
# Reports go to files (TSAN_OPTIONS log_path), the suite's own and those of the instrumented `imago` children that
# tests start (imago serve, fetch …), whose standard error the tests keep in scratch folders they delete: a child's
# report once showed only as its exit status 66, and the retry below passed it (RELIABILITY.md §41).
set -uo pipefail
log=$(mktemp)
reports=$(mktemp -d)
trap 'rm -rf "$log" "$reports"' EXIT
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}log_path=$reports/tsan"
reported() {  # prints every report written so far and says whether there was one
  compgen -G "$reports/tsan.*" > /dev/null || return 1
  cat "$reports"/tsan.* >&2
  echo "test-tsan: ThreadSanitizer reported a data race (above; the process id ends each report file's name:" \
    "$(cd "$reports" && echo tsan.*))" >&2
}
swift test --skip-build --sanitize=thread --build-path .build-tsan --no-parallel 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
reported && exit 1
[ "$status" -eq 0 ] && exit 0
if grep -q "WARNING: ThreadSanitizer" "$log"; then
  echo "test-tsan: ThreadSanitizer reported a data race (see above)" >&2
  exit 1
fi
failed=$(grep -oE '✘ Test [A-Za-z0-9_]+\(' "$log" | sed -E 's/^✘ Test //; s/\($//' | sort -u)
if [ -z "$failed" ]; then
  echo "test-tsan: the run failed (status $status) without a failing test to retry" >&2
  exit "$status"
fi
echo "test-tsan: no ThreadSanitizer report; running the failed tests once more: $(echo $failed)" >&2
swift test --skip-build --sanitize=thread --build-path .build-tsan --no-parallel \
  --filter "$(echo "$failed" | sed -E 's/(.*)/\1\\(/' | paste -sd'|')"
status=$?
reported && exit 1
exit "$status"
