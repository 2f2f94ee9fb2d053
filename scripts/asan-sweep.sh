#!/usr/bin/env bash
# Every file of the corpus's sweep folders, truncated at 10 points and with random byte flips (fixed seed; see
# scripts/hostile-inputs.py), replayed through the `decode` fuzz target by imago-fuzz built with AddressSanitizer.
# Any ASan report or crash fails the script. Prints the number of inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=.build/asan-sweep
rm -rf "$DIR"
python3 scripts/hostile-inputs.py variants "$DIR" "${IMAGO_CORPUS:-$PWD/../shared/corpus}"
python3 scripts/hostile-inputs.py bombs "$DIR" "${IMAGO_CORPUS:-$PWD/../shared/corpus}" >/dev/null
swift build -j 2 --build-path .build-asan -Xswiftc -sanitize=address --product imago-fuzz
BIN=$(swift build --build-path .build-asan --show-bin-path)/imago-fuzz
cp -f Tests/Fuzz/*/* "$DIR"/ 2>/dev/null || true
total=$(ls "$DIR" | wc -l)
start=$(date +%s)
# In batches so that one report names a small set of files; ASan aborts the process on the first error.
ls "$DIR" | sed "s#^#$DIR/#" | xargs -n 200 "$BIN" decode
echo "asan-sweep: $total inputs decoded or rejected cleanly under AddressSanitizer in $(( $(date +%s) - start ))s"
