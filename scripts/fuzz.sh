#!/usr/bin/env bash
# make fuzz [FUZZ_SECONDS=60] [TARGETS="…"]: builds imago-fuzz with libFuzzer + AddressSanitizer and runs each target
# for SECONDS, seeded from ../shared/corpus where it applies. Findings (crash-*, timeout-*, oom-*) land in
# .build-fuzz/findings/TARGET/; each one becomes a regression input under Tests/Fuzz/TARGET/ once fixed.
# Note: Debian's gold linker dies on this link (dwarf_reader internal error), so lld from the toolchain is used.
set -euo pipefail
cd "$(dirname "$0")/.."
# (Not $SECONDS: bash keeps that one as "seconds since the shell started", 0 here, which libFuzzer reads as
# "no time limit".)
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
CORPUS=${IMAGO_CORPUS:-$PWD/../shared/corpus}
swift build -c release -j 2 --build-path .build-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
  -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld --product imago-fuzz
BIN=$(swift build -c release --build-path .build-fuzz --show-bin-path)/imago-fuzz
ALL="decode disk-entry http-headers cli-arguments exif jpeg jpeg-dc png apng bmp-ico"
ALL="$ALL avif heif isobmff tiff svg svg-sanitize jxl proxy-url request-headers gif-roundtrip png-palette still-encoders"
ALL="$ALL metadata peer-answers"
TARGETS=${TARGETS:-$ALL}
summary=()
for target in $TARGETS; do
  work=.build-fuzz/corpus/$target
  findings=.build-fuzz/findings/$target
  mkdir -p "$work" "$findings"
  seeds=()
  case $target in
    decode) seeds=("$CORPUS/pngsuite/png" "$CORPUS/jpeg/malformed" "$CORPUS/gif/malformed" "$CORPUS/gif/samples"
      "$CORPUS/webp/images" "$CORPUS/apng" "Tests/Fuzz/bmp-ico" "$CORPUS/icc");;
    jpeg) seeds=("$CORPUS/jpeg/malformed" "$CORPUS/icc");;
    jpeg-dc) seeds=("$CORPUS/jpeg/reference" "$CORPUS/jpeg/malformed/imagetestsuite" "$CORPUS/jpeg/malformed");;
    png) seeds=("$CORPUS/pngsuite/png" "$CORPUS/icc");;
    avif) seeds=("$CORPUS/avif" "$CORPUS/hostile-modern");;
    isobmff) seeds=();;  # Tests/Fuzz/isobmff: decisions, not files (ISOBMFFFuzzFile writes the file)
    heif) seeds=("$CORPUS/heic" "$CORPUS/hostile-modern");;
    tiff) seeds=();;  # Tests/Fuzz/tiff holds small TIFFs of each kind, written with libtiff
    svg) seeds=();;  # Tests/Fuzz/svg: the corpus's SVG and small documents with embedded images and references
    svg-sanitize) seeds=("Tests/Fuzz/svg");;  # and Tests/Fuzz/svg-sanitize: active content of every kind
    png-palette) seeds=();;  # Tests/Fuzz/png-palette: raw pixels (width, colours, RGBA bytes), not files
    still-encoders) seeds=();;  # Tests/Fuzz/still-encoders: raw pixels (width, RGBA bytes), not files
    metadata) seeds=("$CORPUS/icc" "$CORPUS/formats");;  # and Tests/Fuzz/metadata: files with EXIF, XMP and IPTC
    jxl) seeds=("$CORPUS/jxl");;
    apng) seeds=("$CORPUS/apng" "$CORPUS/hostile-modern");;
    gif-roundtrip) seeds=("$CORPUS/gif/samples" "$CORPUS/gif/malformed" "$CORPUS/gif/regression");;
  esac
  [ -d "Tests/Fuzz/$target" ] && seeds+=("Tests/Fuzz/$target")
  echo "== fuzzing $target for ${SECONDS_PER_TARGET}s"
  log=.build-fuzz/$target.log
  set +e
  # proxy-url keeps one proxy (its caches, its in-memory origin) across inputs, and Swift enums keep object
  # pointers with tag bits in their spare bits (Data's storage inside Data._Representation, for one), which
  # LeakSanitizer cannot follow: outputs held in the caches are reported as leaks, after an input and at exit
  # (RELIABILITY.md §21). Its leak checks are off, and request-headers' (the same proxy); ASan's memory checks stay on.
  # svg: fontconfig's caches (once a process) and libxml2's entity values (~100 bytes a document that declares
  # entities, inside librsvg) are reported too; those are the system libraries', not Imago's (RELIABILITY.md §28).
  # Every other target checks leaks, except for the allocations scripts/lsan-suppressions.txt names: the default
  # CMYK profile, read once a process into a static `Data` when a CMYK JPEG without a profile comes by, is held
  # through the same tagged pointers and reported at exit (by `decode` and `metadata`).
  leaks=1
  [ "$target" != proxy-url ] && [ "$target" != request-headers ] && [ "$target" != svg ] || leaks=0
  LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$PWD/scripts/lsan-suppressions.txt" \
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=$leaks" IMAGO_FUZZ_TARGET=$target "$BIN" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -detect_leaks=$leaks -max_len=262144 -artifact_prefix="$findings/" "$work" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || echo "?")
  found=$(ls "$findings" | wc -l)
  summary+=("$target: $runs executions in ${SECONDS_PER_TARGET}s, exit $rc, findings $found")
  [ $rc -eq 0 ] || tail -30 "$log"
done
printf '%s\n' "${summary[@]}"
