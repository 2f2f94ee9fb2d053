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
# Every public symbol declared in the module's sources has a /// comment (STYLE: "every public symbol has a doc
# comment"); the compiler's own (synthesized conformances, inherited members) are not in Sources and not counted.
python3 - "$GRAPHS" "$PWD/Sources/" <<'PY'
import glob, json, sys
graphs, sources = sys.argv[1], sys.argv[2]
missing = []
for path in glob.glob(f"{graphs}/*.symbols.json"):
    for symbol in json.load(open(path))["symbols"]:
        uri = symbol.get("location", {}).get("uri", "")
        if symbol.get("accessLevel") in ("public", "open") and "docComment" not in symbol and sources in uri:
            line = symbol["location"]["position"]["line"] + 1
            missing.append(f"{uri.split(sources)[1]}:{line}: {'.'.join(symbol['pathComponents'])}")
for entry in sorted(missing):
    print(f"docs: no doc comment: {entry}", file=sys.stderr)
sys.exit(1 if missing else 0)
PY
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
