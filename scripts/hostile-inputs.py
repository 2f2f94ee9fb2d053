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


def avif_sample_table_bomb(corpus, samples):
    """An `avis` sequence of `samples` samples, each the whole coded image of the corpus's 1x1 AVIF (one chunk a
    sample, all at the same offset): 4 bytes of `stco` a sample, the cheapest table every sample of which decodes."""
    still = open(os.path.join(corpus, "avif", "libavif-white_1x1.avif"), "rb").read()

    def found(kind):
        at = still.index(kind.encode()) - 4
        return still[at:at + struct.unpack(">I", still[at:at + 4])[0]]

    av1c, payload = found("av1C"), found("mdat")[8:]

    def box(kind, body):
        return struct.pack(">I", 8 + len(body)) + kind.encode() + body

    def full(kind, body, flags=0):
        return box(kind, struct.pack(">I", flags) + body)

    matrix = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    duration = struct.pack(">I", samples)
    ftyp = box("ftyp", b"avis" + bytes(4) + b"mif1miafavismsf1")

    def moov(mdat_start):
        entry = box("av01", bytes(6) + struct.pack(">H", 1) + bytes(16) + struct.pack(">HHIIIH", 1, 1, 0x480000,
            0x480000, 0, 1) + bytes(32) + struct.pack(">Hh", 0x18, -1) + av1c)
        stbl = box("stbl", full("stsd", struct.pack(">I", 1) + entry) + full("stts", struct.pack(">III", 1, samples, 1))
            + full("stsc", struct.pack(">IIII", 1, 1, 1, 1)) + full("stsz", struct.pack(">II", len(payload), samples))
            + full("stco", struct.pack(">I", samples) + struct.pack(">I", mdat_start) * samples))
        minf = box("minf", full("vmhd", bytes(8), 1) + box("dinf", full("dref", struct.pack(">I", 1) + full("url ", b"", 1)))
            + stbl)
        mdia = box("mdia", full("mdhd", bytes(8) + struct.pack(">I", 1000) + duration + b"\x55\xc4" + bytes(2))
            + full("hdlr", bytes(4) + b"pict" + bytes(13)) + minf)
        tkhd = full("tkhd", bytes(8) + struct.pack(">I", 1) + bytes(4) + duration + bytes(16) + matrix
            + struct.pack(">II", 1 << 16, 1 << 16), 3)
        mvhd = full("mvhd", bytes(8) + struct.pack(">I", 1000) + duration + struct.pack(">IH", 0x10000, 0x100) + bytes(10)
            + matrix + bytes(24) + struct.pack(">I", 2))
        return box("moov", mvhd + box("trak", tkhd + mdia))

    start = len(ftyp) + len(moov(0)) + 8
    return ftyp + moov(start) + box("mdat", payload)


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
        # libavif's default count bound (12 h at 60 fps) of samples, 10 MB of sample table; each sample decodes
        "avif-2592000-samples.avif": avif_sample_table_bomb(corpus, 2592000),
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
