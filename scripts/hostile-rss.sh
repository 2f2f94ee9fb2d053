#!/usr/bin/env bash
# Peak RSS of decoding each decompression bomb (scripts/hostile-inputs.py bombs) with the DEFAULT decoding options
# through the default registry, each in its own process (imago-fuzz replay `decode-defaults`; release build).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release -j 2 --product imago-fuzz >/dev/null
BIN=$(swift build -c release --show-bin-path)/imago-fuzz
DIR=.build/hostile-bombs
python3 scripts/hostile-inputs.py bombs "$DIR" "${IMAGO_CORPUS:-$PWD/../shared/corpus}" >/dev/null
: >"$DIR/empty"
echo "baseline (empty input): $("$BIN" decode-defaults "$DIR/empty" | sed 's/.*peak RSS //')"
for f in "$DIR"/*; do
  start=$(date +%s.%N)
  out=$("$BIN" decode-defaults "$f")
  end=$(date +%s.%N)
  printf '%-40s %s  %.2fs\n' "$(basename "$f")" "$(sed 's/.*peak RSS //' <<<"$out")" "$(awk "BEGIN {print $end - $start}")"
done
# The AVIF, HEIC and JPEG XL files of the corpus's hostile-modern folder (truncations, absurd ispe sizes, malformed files).
for f in "${IMAGO_CORPUS:-$PWD/../shared/corpus}"/hostile-modern/*.{avif,heic,jxl}; do
  start=$(date +%s.%N)
  out=$("$BIN" decode-defaults "$f")
  end=$(date +%s.%N)
  printf '%-70s %s  %.2fs\n' "$(basename "$f")" "$(sed 's/.*peak RSS //' <<<"$out")" "$(awk "BEGIN {print $end - $start}")"
done
# Issue 17: every APNG of hostile-modern (crafted, truncated, malformed) and the BMP/ICO bombs of Tests/Fuzz/decode.
CORPUS=${IMAGO_CORPUS:-$PWD/../shared/corpus}
for f in "$CORPUS"/hostile-modern/*.png Tests/Fuzz/decode/bomb-bmp-* Tests/Fuzz/decode/bomb-ico-*; do
  start=$(date +%s.%N)
  out=$("$BIN" decode-defaults "$f")
  end=$(date +%s.%N)
  printf '%-70s %-60s %.2fs\n' "$(basename "$f")" "$(sed 's/, no crash//' <<<"$out" | head -c 160 | tr '\n' ' ')" \
    "$(awk "BEGIN {print $end - $start}")"
done
