#!/usr/bin/env python3
"""Hostile decoder inputs for scripts/asan-sweep.sh and scripts/hostile-rss.sh.

  hostile-inputs.py bombs DIR            decompression bombs (tiny files declaring huge images / many frames)
  hostile-inputs.py variants DIR CORPUS  every corpus file of the sweep folders as is, truncated at 10 points and
                                         with 5 random byte-flip variants each (fixed seed 20261130)
"""
import os, random, struct, sys, zlib

SWEEP = ["jpeg/malformed", "gif/malformed", "gif/stall", "gif/regression", "pngsuite/png", "jpeg/reference",
         "webp/images", "gif/samples", "formats", "apng", "icc"]
EXTS = (".jpg", ".jpeg", ".png", ".gif", ".webp")
SWEEP += ["avif", "heic", "hostile-modern"]  # AVIF/HEIC (libavif, libheif); TIFF seeds come from Tests/Fuzz/tiff
EXTS += (".avif", ".avifs", ".heic", ".heif", ".tif")


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bomb(w, h):
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    idat = zlib.compress(b"\0" * 4096, 9)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")


def jpeg_bomb(corpus, w, h):
    data = bytearray(open(os.path.join(corpus, "jpeg/reference/grayscale_square.jpg"), "rb").read())
    i = 2
    while i + 9 < len(data):
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            data[i + 5:i + 9] = struct.pack(">HH", h, w)
            return bytes(data)
        i += 2 + length
    raise SystemExit("no SOF in grayscale_square.jpg")


def riff(chunks):
    body = b"WEBP" + chunks
    return b"RIFF" + struct.pack("<I", len(body)) + body


def webp_lossless_bomb(w, h):
    bits = (w - 1) | ((h - 1) << 14) | (1 << 28)
    payload = b"\x2f" + struct.pack("<I", bits) + b"\0" * 16
    return riff(b"VP8L" + struct.pack("<I", len(payload)) + payload)


def webp_canvas_bomb(w, h):
    vp8x = bytes([0x12, 0, 0, 0]) + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    return riff(b"VP8X" + struct.pack("<I", 10) + vp8x)


def gif(w, h, frames):
    head = b"GIF89a" + struct.pack("<HHBBB", w, h, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    head += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\0\0\0"
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    return head + frame * frames + b"\x3b"


def bombs(out, corpus):
    os.makedirs(out, exist_ok=True)
    files = {
        "png-100000x100000.png": png_bomb(100000, 100000),
        "jpeg-65500x65500.jpg": jpeg_bomb(corpus, 65500, 65500),
        "webp-lossless-16384x16384.webp": webp_lossless_bomb(16384, 16384),
        "webp-canvas-30000x30000.webp": webp_canvas_bomb(30000, 30000),
        "gif-65535x65535.gif": gif(65535, 65535, 1),
        "gif-100000-frames.gif": gif(1, 1, 100000),
        # 9000x9000 canvas (81 MP, under the pixel limit), 100 one-pixel frames: 100 canvas-sized frames = 32 GB
        "gif-animation-32GB.gif": gif(9000, 9000, 100),
    }
    for name, data in files.items():
        open(os.path.join(out, name), "wb").write(data)
        print(name, len(data))


def variants(out, corpus):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261130)
    count = 0
    for folder in SWEEP:
        base = os.path.join(corpus, folder)
        for name in sorted(os.listdir(base)):
            if not name.lower().endswith(EXTS):
                continue
            data = open(os.path.join(base, name), "rb").read()
            stem = folder.replace("/", "_") + "_" + name
            def put(tag, blob):
                nonlocal count
                open(os.path.join(out, f"{stem}.{tag}"), "wb").write(blob)
                count += 1
            put("orig", data)
            for i in range(1, 11):
                put(f"cut{i}", data[: len(data) * i // 11])
            for k in range(5):
                b = bytearray(data)
                for _ in range(rng.randint(1, 16)):
                    if b:
                        b[rng.randrange(len(b))] = rng.randrange(256)
                put(f"flip{k}", bytes(b))
    print(count, "variants in", out)


if __name__ == "__main__":
    mode, out = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "../../shared/corpus")
    {"bombs": bombs, "variants": variants}[mode](out, corpus)
