#!/usr/bin/env python3
"""Makes a HEIF image sequence (.heics) from a still HEIC: `make-heics.py in.heic out.heics`.

The still's `ftyp` becomes an image-sequence one (major brand `msf1`; compatible `msf1`, `mif1`, `hevc`: the same
box size, so the `meta` box's absolute `iloc` offsets stay valid), its `meta` stays as the cover (primary) image,
and a `moov` box is appended with one `pict` track of one sample: the primary item's own HEVC data (same `hvcC`,
length-prefixed NAL units), 1 s long. Nothing on this machine writes HEIF sequences (heif-enc 1.15 writes stills,
no ffmpeg/MP4Box), hence this. Only single-extent, file-offset (construction method 0) primary items are handled.
"""
import struct
import sys


def boxes(data, start=0, end=None):
    end = len(data) if end is None else end
    i = start
    while i + 8 <= end:
        size, kind = struct.unpack(">I4s", data[i:i + 8])
        header = 8
        if size == 1:
            size = struct.unpack(">Q", data[i + 8:i + 16])[0]
            header = 16
        elif size == 0:
            size = end - i
        yield kind, i, i + header, i + size
        i += size


def child(data, start, end, kind):
    for k, _, body, stop in boxes(data, start, end):
        if k == kind:
            return body, stop
    raise SystemExit(f"no {kind!r} box")


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def full(kind, version, flags, payload):
    return box(kind, struct.pack(">I", version << 24 | flags) + payload)


def main(src, dst):
    data = open(src, "rb").read()
    top = list(boxes(data))
    ftyp = next(b for b in top if b[0] == b"ftyp")
    meta = next(b for b in top if b[0] == b"meta")
    _, meta_start, _, meta_end = meta
    meta_body = meta_start + 12  # FullBox
    pitm_body, _ = child(data, meta_body, meta_end, b"pitm")
    version = data[pitm_body]
    primary = struct.unpack(">H" if version == 0 else ">I", data[pitm_body + 4:pitm_body + (6 if version == 0 else 8)])[0]

    # iloc: the primary item's single extent.
    iloc_body, _ = child(data, meta_body, meta_end, b"iloc")
    v = data[iloc_body]
    p = iloc_body + 4
    offset_size, length_size = data[p] >> 4, data[p] & 15
    base_size, index_size = data[p + 1] >> 4, (data[p + 1] & 15 if v in (1, 2) else 0)
    p += 2
    count = struct.unpack(">H" if v < 2 else ">I", data[p:p + (2 if v < 2 else 4)])[0]
    p += 2 if v < 2 else 4

    def read(n):
        nonlocal p
        value = int.from_bytes(data[p:p + n], "big") if n else 0
        p += n
        return value

    extent = None
    for _ in range(count):
        item = read(2 if v < 2 else 4)
        method = read(2) & 15 if v in (1, 2) else 0
        read(2)  # data reference index
        base = read(base_size)
        extents = read(2)
        found = []
        for _ in range(extents):
            read(index_size)
            found.append((base + read(offset_size), read(length_size)))
        if item == primary:
            if method != 0 or len(found) != 1:
                raise SystemExit("primary item is not one extent in the file")
            extent = found[0]
    if extent is None:
        raise SystemExit("primary item has no iloc entry")

    # hvcC and ispe of the primary item, through ipma.
    iprp_body, iprp_end = child(data, meta_body, meta_end, b"iprp")
    ipco_body, ipco_end = child(data, iprp_body, iprp_end, b"ipco")
    properties = [(k, s, body, e) for k, s, body, e in boxes(data, ipco_body, ipco_end)]
    ipma_body, _ = child(data, iprp_body, iprp_end, b"ipma")
    mv, mflags = data[ipma_body], int.from_bytes(data[ipma_body + 1:ipma_body + 4], "big")
    p = ipma_body + 4
    entries = read(4)
    hvcc = ispe = None
    for _ in range(entries):
        item = read(2 if mv < 1 else 4)
        for _ in range(read(1)):
            raw = read(2 if mflags & 1 else 1)
            index = raw & (0x7FFF if mflags & 1 else 0x7F)
            if item == primary and index > 0:
                kind, start, body, stop = properties[index - 1]
                if kind == b"hvcC":
                    hvcc = data[start:stop]
                if kind == b"ispe":
                    ispe = struct.unpack(">II", data[body + 4:body + 12])
    if hvcc is None or ispe is None:
        raise SystemExit("primary item has no hvcC/ispe")
    width, height = ispe

    _, f_start, _, f_end = ftyp
    new_ftyp = box(b"ftyp", b"msf1" + struct.pack(">I", 0) + b"msf1" + b"mif1" + b"hevc")
    if len(new_ftyp) != f_end - f_start:
        raise SystemExit(f"ftyp is {f_end - f_start} bytes; this script keeps it at 28 (three compatible brands)")
    out = bytearray(data)
    out[f_start:f_end] = new_ftyp

    offset, length = extent
    matrix = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    mvhd = full(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, 1000, 1000) + struct.pack(">IH", 0x10000, 0x100)
                + bytes(10) + matrix + bytes(24) + struct.pack(">I", 2))
    tkhd = full(b"tkhd", 0, 3, struct.pack(">IIIII", 0, 0, 1, 0, 1000) + bytes(8) + struct.pack(">hhhH", 0, 0, 0, 0)
                + matrix + struct.pack(">II", width << 16, height << 16))
    mdhd = full(b"mdhd", 0, 0, struct.pack(">IIIIHH", 0, 0, 1000, 1000, 0x55C4, 0))
    hdlr = full(b"hdlr", 0, 0, struct.pack(">I4sIII", 0, b"pict", 0, 0, 0) + b"\0")
    vmhd = full(b"vmhd", 0, 1, bytes(8))
    dinf = box(b"dinf", full(b"dref", 0, 0, struct.pack(">I", 1) + full(b"url ", 0, 1, b"")))
    sample_entry = box(b"hvc1", bytes(6) + struct.pack(">H", 1) + bytes(16) + struct.pack(">HH", width, height)
                       + struct.pack(">II", 0x480000, 0x480000) + bytes(4) + struct.pack(">H", 1) + bytes(32)
                       + struct.pack(">Hh", 0x18, -1) + hvcc
                       + full(b"ccst", 0, 0, struct.pack(">I", 0x7C000000)))  # all-intra, 15 references max
    stbl = box(b"stbl", full(b"stsd", 0, 0, struct.pack(">I", 1) + sample_entry)
               + full(b"stts", 0, 0, struct.pack(">III", 1, 1, 1000))
               + full(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, 1, 1))
               + full(b"stsz", 0, 0, struct.pack(">III", 0, 1, length))
               + full(b"stco", 0, 0, struct.pack(">II", 1, offset)))
    moov = box(b"moov", mvhd + box(b"trak", tkhd + box(b"mdia", mdhd + hdlr + box(b"minf", vmhd + dinf + stbl))))
    open(dst, "wb").write(bytes(out) + moov)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
