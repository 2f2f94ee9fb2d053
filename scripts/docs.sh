#!/usr/bin/env bash
# make docs: the DocC archive of ImagoCore, built with the toolchain's docc from the package's symbol graphs.
# Any warning (a broken symbol link, an unresolved article) fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -j "${JOBS:-2}" --target ImagoCore >/dev/null
GRAPHS=.build/docs/symbolgraphs
rm -rf "$GRAPHS" && mkdir -p "$GRAPHS"
# What `swift package dump-symbol-graph` does, for this one module (that command builds and extracts every target).
swift symbolgraph-extract -module-name ImagoCore -I "$(swift build --show-bin-path)/Modules" \
  -target "$(uname -m)-unknown-linux-gnu" -minimum-access-level public -skip-inherited-docs \
  -output-dir "$GRAPHS"
OUT=.build/docs/ImagoCore.doccarchive
rm -rf "$OUT"
LOG=.build/docs/docc.log
docc convert Sources/ImagoCore/ImagoCore.docc \
  --fallback-display-name ImagoCore --fallback-bundle-identifier org.imago.ImagoCore \
  --additional-symbol-graph-dir "$GRAPHS" --output-path "$OUT" >"$LOG" 2>&1 || { cat "$LOG"; exit 1; }
if grep -q "warning:" "$LOG"; then
  cat "$LOG"
  echo "docs: $(grep -c 'warning:' "$LOG") warnings (the catalog must build without any)" >&2
  exit 1
fi
echo "docs: $OUT"
