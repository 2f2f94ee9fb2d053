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
# In batches of 200 so that a report names a small set of files; ASan aborts the process on its first error and
# LeakSanitizer reports leaks at exit (non-zero status). Every batch is accounted for.
ls "$DIR" | sed "s#^#$DIR/#" > .build/asan-sweep.list
split -l 200 .build/asan-sweep.list .build/asan-sweep.batch.
replayed=0
failed=()
for batch in .build/asan-sweep.batch.*; do
  if out=$(xargs "$BIN" decode < "$batch" 2>&1); then
    replayed=$((replayed + $(wc -l < "$batch")))
  else
    failed+=("$batch")
    echo "$out" | grep -E "ERROR|SUMMARY" | head -5
  fi
done
rm -f .build/asan-sweep.batch.*
echo "asan-sweep: $total inputs, $replayed in clean batches, ${#failed[@]} batch(es) with an ASan/LSan report, $(( $(date +%s) - start ))s"
[ ${#failed[@]} -eq 0 ]
