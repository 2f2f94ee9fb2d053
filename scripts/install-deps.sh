#!/usr/bin/env bash
# Installs the Debian packages Imago builds against, only those that are missing.
# Called by `make test`, `make demo` and `make bench`; safe to run again (it does nothing when all are present).
set -euo pipefail

# header file that proves the -dev package is present  ->  Debian package that provides it
declare -A NEEDED=(
  [/usr/include/turbojpeg.h]=libturbojpeg0-dev
  [/usr/include/jpeglib.h]=libjpeg62-turbo-dev
  [/usr/include/png.h]=libpng-dev
  [/usr/include/webp/decode.h]=libwebp-dev
  [/usr/include/webp/demux.h]=libwebp-dev
  [/usr/include/gif_lib.h]=libgif-dev
  [/usr/include/jxl/decode.h]=libjxl-dev
  [/usr/bin/pkg-config]=pkg-config
  [/usr/include/x86_64-linux-gnu/curl/curl.h]=libcurl4-openssl-dev
  [/usr/include/openssl/evp.h]=libssl-dev
  [/usr/include/avif/avif.h]=libavif-dev
  [/usr/include/x86_64-linux-gnu/libheif/heif.h]=libheif-dev
  [/usr/include/libde265/de265.h]=libde265-dev
  # dav1d's headers, for CDav1dQuiet (libheif-dev brings them too)
  [/usr/include/dav1d/dav1d.h]=libdav1d-dev
  [/usr/include/x86_64-linux-gnu/libavcodec/avcodec.h]=libavcodec-dev
  [/usr/include/x86_64-linux-gnu/tiffio.h]=libtiff-dev
  [/usr/include/microhttpd.h]=libmicrohttpd-dev
  [/usr/include/lcms2.h]=liblcms2-dev
  [/usr/include/zlib.h]=zlib1g-dev
  [/usr/include/libxml2/libxml/parser.h]=libxml2-dev
  # the standard CMYK profile for CMYK JPEGs without one (Ghostscript's default_cmyk.icc; data only, no library)
  [/usr/share/color/icc/ghostscript/default_cmyk.icc]=libgs-common
  [/usr/include/hiredis/hiredis.h]=libhiredis-dev
  # SVG: librsvg and cairo, loaded at run time by CSVGPlugin (no headers needed)
  [/usr/lib/x86_64-linux-gnu/librsvg-2.so.2]=librsvg2-2
  [/usr/bin/redis-server]=redis-server
  # the tests' gRPC collector for OTLP over gRPC (Debian's python3 and its grpc module; a test tool only)
  [/usr/lib/python3/dist-packages/grpc/__init__.py]=python3-grpcio
)
EXTRA=("$@")  # further packages a caller needs (e.g. tmux for terminal tests), given as package:probe-path

missing=()
for probe in "${!NEEDED[@]}"; do
  [ -e "$probe" ] || missing+=("${NEEDED[$probe]}")
done
for item in "${EXTRA[@]}"; do
  pkg=${item%%:*}; probe=${item#*:}
  [ -e "$probe" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

# de-duplicate
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages: ${missing[*]}; run as root or install them with: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt-get on this machine; install the equivalents of: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || echo "install-deps: apt-get update failed; trying the install anyway" >&2
if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
  echo "install-deps: could not install ${missing[*]}; install them by hand (apt-get install ${missing[*]})" >&2
  exit 1
fi
