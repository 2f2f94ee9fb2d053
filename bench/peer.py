#!/usr/bin/env python3
"""The Python peer for imago-bench: what a competent Python user would write for the same work.

Each mode does one round of work and prints one JSON object: {"seconds": …, "peak_rss_kb": …, …}.
Fast paths everywhere: a pooled keep-alive requests.Session, Pillow's draft() (JPEG DCT scaling) before
thumbnail(), diskcache.Cache with its defaults, an LRU dict, ThreadPoolExecutor(6).
"""
import io
import json
import os
import resource
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import diskcache
import requests
from PIL import Image

try:
    import pillow_jxl  # noqa: F401 (pillow-jxl-plugin: registers the JPEG XL format with Pillow on import)
except ImportError:
    pass
# AVIF and HEIC for the `modern` facet: pillow-avif-plugin and pillow-heif register themselves with Pillow.
try:
    import pillow_avif  # noqa: F401
except ImportError:
    pass
try:
    from pillow_heif import register_heif_opener

    register_heif_opener()
except ImportError:
    pass

THUMB = (256, 256)


class LRU:
    """An LRU dict bounded by total byte cost, thread-safe (the usual OrderedDict recipe)."""

    def __init__(self, cost_limit):
        self.d = OrderedDict()
        self.cost = 0
        self.limit = cost_limit
        self.lock = threading.Lock()

    def get(self, k):
        with self.lock:
            v = self.d.get(k)
            if v is not None:
                self.d.move_to_end(k)
            return v

    def set(self, k, v, cost):
        with self.lock:
            if k in self.d:
                self.cost -= self.d.pop(k)[1]
            self.d[k] = (v, cost)
            self.cost += cost
            while self.cost > self.limit and self.d:
                _, (_, c) = self.d.popitem(last=False)
                self.cost -= c


def thumbnail(data):
    im = Image.open(io.BytesIO(data))
    im.draft("RGB", THUMB)
    im.thumbnail(THUMB)
    im.load()
    return im


def full_decode(data):
    im = Image.open(io.BytesIO(data))
    im.load()
    return im


def all_frames(data):
    """Every frame of an animation as its own RGBA canvas, what Imago's decoders return: Pillow's APNG reader
    composites in seek() (dispose and blend) into one image it reuses, so each frame is kept with convert()."""
    im = Image.open(io.BytesIO(data))
    frames = []
    for i in range(getattr(im, "n_frames", 1)):
        im.seek(i)
        im.load()
        frames.append(im.convert("RGBA"))
    return frames


def all_frames_reused(data):
    """Every frame composited into Pillow's one reused image, none kept: less output than Imago returns."""
    im = Image.open(io.BytesIO(data))
    for i in range(getattr(im, "n_frames", 1)):
        im.seek(i)
        im.load()
    return im


def gif_input(data):
    """The frames to write as GIF, decoded untimed: an animation's RGBA canvases (as Imago's encoder gets them)
    with their durations and loop count; a still image in its own mode (Pillow's GIF writer quantizes RGB)."""
    im = Image.open(io.BytesIO(data))
    n = getattr(im, "n_frames", 1)
    if n == 1:
        im.load()
        return [im.convert("RGB") if im.mode not in ("RGB", "RGBA") else im], [0], None
    frames, durations = [], []
    for i in range(n):
        im.seek(i)
        im.load()
        frames.append(im.convert("RGBA"))
        durations.append(im.info.get("duration", 0))
    return frames, durations, im.info.get("loop", 0)


def encode_gif(frames, durations, loop):
    """What a Python user writes: Image.save as GIF (Pillow quantizes each frame to an adaptive palette and writes
    only the changed box of each frame)."""
    buf = io.BytesIO()
    if len(frames) == 1:
        frames[0].save(buf, "GIF")
    else:
        frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:], duration=durations, loop=loop)
    return buf.getbuffer().nbytes


def peak_rss_kb():
    """This process's peak resident set in KiB: VmHWM, which exec resets (ru_maxrss keeps the parent's peak
    from before the fork, so a child spawned by a large parent would report the parent's size)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def session():
    s = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=6, pool_maxsize=6)
    s.mount("http://", adapter)
    return s


def pipeline(urls, cache_dir, memory, fetch):
    cache = diskcache.Cache(cache_dir)

    def one(url):
        hit = memory.get(url)
        if hit is not None:
            return hit[0].size
        data = cache.get(url)
        if data is None:
            data = fetch(url)
            cache.set(url, data)
        im = thumbnail(data)
        memory.set(url, im, im.size[0] * im.size[1] * 4)
        return im.size

    with ThreadPoolExecutor(6) as pool:
        sizes = list(pool.map(one, urls))
    cache.close()
    return sizes


def main():
    mode = sys.argv[1]
    out = {}
    if mode in ("cold", "warm-disk", "warm-memory"):
        urls = [line.strip() for line in open(sys.argv[2]) if line.strip()]
        cache_dir = sys.argv[3]
        memory = LRU(64 << 20)
        local = threading.local()

        def fetch(url):
            sess = getattr(local, "s", None)
            if sess is None:
                sess = local.s = session()
            r = sess.get(url, timeout=15)
            r.raise_for_status()
            return r.content

        if mode == "warm-memory":
            memory = LRU(1 << 40)
            pipeline(urls, cache_dir, memory, fetch)  # fill memory (not timed)
        c0, t0 = time.process_time(), time.perf_counter()
        sizes = pipeline(urls, cache_dir, memory, fetch)
        out["seconds"] = time.perf_counter() - t0
        out["cpu_seconds"] = time.process_time() - c0  # all threads of this process
        out["count"] = len(sizes)
    elif mode in ("decode", "thumbnail", "frames", "frames-reused"):
        # One file N times after one untimed warm-up call (Pillow imports its format plugin on first use):
        # mean CPU seconds per call on this thread (Pillow decodes on the calling thread), and mean wall seconds.
        path, n = sys.argv[2], int(sys.argv[3])
        data = open(path, "rb").read()
        work = {"thumbnail": thumbnail, "frames": all_frames, "frames-reused": all_frames_reused}.get(mode, full_decode)
        work(data)
        c0, t0, p0 = time.thread_time(), time.perf_counter(), time.process_time()
        for _ in range(n):
            work(data)
        out["cpu_seconds"] = (time.thread_time() - c0) / n
        # all threads: the AVIF/HEIC plugins' decoders (dav1d, libde265) may decode on worker threads
        out["process_cpu_seconds"] = (time.process_time() - p0) / n
        out["seconds"] = (time.perf_counter() - t0) / n
        out["process_cpu_seconds"] = (time.process_time() - p0) / n  # all threads (decoders with thread pools)
    elif mode == "encode-gif":
        # One file's frames written as GIF N times after one untimed call: mean CPU seconds per call.
        path, n = sys.argv[2], int(sys.argv[3])
        frames, durations, loop = gif_input(open(path, "rb").read())
        out["bytes"] = encode_gif(frames, durations, loop)
        c0 = time.thread_time()
        for _ in range(n):
            encode_gif(frames, durations, loop)
        out["cpu_seconds"] = (time.thread_time() - c0) / n
    elif mode == "encode-still":
        # One photo written as FORMAT (bmp, tiff, ico, heic) N times after one untimed call, as a Python user
        # writes it with Pillow: BMP and ICO at their defaults (ICO: the photo fitted into 256 x 256, one size),
        # TIFF with LZW (Pillow writes it through libtiff), HEIC with pillow-heif at quality 80. Mean CPU seconds of
        # all threads (x265 encodes on worker threads).
        fmt, path, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        im = Image.open(path).convert("RGB")
        im.load()
        if fmt == "ico":
            im.thumbnail((256, 256))

        def encode_still():
            buf = io.BytesIO()
            if fmt == "bmp":
                im.save(buf, "BMP")
            elif fmt == "tiff":
                im.save(buf, "TIFF", compression="tiff_lzw")
            elif fmt == "ico":
                im.save(buf, "ICO", sizes=[im.size])
            else:
                im.save(buf, "HEIF", quality=80)
            return buf.getbuffer().nbytes

        out["bytes"] = encode_still()
        p0 = time.process_time()
        for _ in range(n):
            encode_still()
        out["cpu_seconds"] = (time.process_time() - p0) / n
    elif mode == "encode-png-palette":
        # One RGB image written as a palette PNG of at most COLORS colours N times after one untimed call, as a
        # Python user quantizes: Image.quantize (median cut, Floyd-Steinberg) then save as PNG. Mean CPU seconds.
        path, n, colors = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        im = Image.open(path).convert("RGB")
        im.load()

        def encode_palette():
            buf = io.BytesIO()
            im.quantize(colors, dither=Image.Dither.FLOYDSTEINBERG).save(buf, "PNG")
            return buf.getbuffer().nbytes

        out["bytes"] = encode_palette()
        c0 = time.thread_time()
        for _ in range(n):
            encode_palette()
        out["cpu_seconds"] = (time.thread_time() - c0) / n
    elif mode == "encode-png-palette-rgba":
        # One RGBA image with soft alpha written as a palette PNG of at most COLORS colours N times after one
        # untimed call whose file goes to OUT, by TOOL at its defaults: "pillow" (Image.quantize, which takes RGBA
        # only with its fast octree; Floyd-Steinberg) or "pngquant" (the CLI, libimagequant's reference, one
        # subprocess a call, its CPU from RUSAGE_CHILDREN). Mean CPU seconds.
        import subprocess

        path, n, colors, tool, dest = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
        im = Image.open(path).convert("RGBA")
        im.load()
        source = open(path, "rb").read()

        def encode_palette():
            if tool == "pngquant":
                return subprocess.run(
                    ["pngquant", "--force", str(colors), "-"], input=source, capture_output=True, check=True
                ).stdout
            buf = io.BytesIO()
            im.quantize(colors, dither=Image.Dither.FLOYDSTEINBERG).save(buf, "PNG")
            return buf.getvalue()

        data = encode_palette()
        open(dest, "wb").write(data)
        out["bytes"] = len(data)
        c0 = time.thread_time()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(n):
            encode_palette()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        children = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        out["cpu_seconds"] = ((time.thread_time() - c0) + children) / n
    elif mode == "decode-icc":
        # Decode + convert the embedded ICC profile to sRGB (ImageCms defaults: perceptual intent), N times after
        # one untimed warm-up: mean CPU seconds per call on this thread.
        from PIL import ImageCms
        path, n = sys.argv[2], int(sys.argv[3])
        data = open(path, "rb").read()
        srgb = ImageCms.createProfile("sRGB")

        def decode_icc():
            im = Image.open(io.BytesIO(data))
            im.load()
            source = ImageCms.ImageCmsProfile(io.BytesIO(im.info["icc_profile"]))
            return ImageCms.profileToProfile(im, source, srgb, outputMode="RGB")

        decode_icc()
        c0, t0 = time.thread_time(), time.perf_counter()
        for _ in range(n):
            decode_icc()
        out["cpu_seconds"] = (time.thread_time() - c0) / n
        out["seconds"] = (time.perf_counter() - t0) / n
    elif mode == "diskcache":  # N sets then N gets of SIZE-byte values, seconds per op
        cache_dir, n, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        payload = os.urandom(size)
        cache = diskcache.Cache(cache_dir)
        t0 = time.perf_counter()
        for i in range(n):
            cache.set(f"https://images.example.com/photos/{i:08d}.jpg", payload)
        out["set_seconds"] = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        for i in range(n):
            assert cache.get(f"https://images.example.com/photos/{i:08d}.jpg") is not None
        out["get_seconds"] = (time.perf_counter() - t0) / n
        cache.close()
    elif mode == "rss-thumbnail":  # peak RSS of one 256-px thumbnail of a large file
        base = peak_rss_kb()
        thumbnail(open(sys.argv[2], "rb").read())
        out["baseline_rss_kb"] = base
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        sys.exit(2)
    out["peak_rss_kb"] = peak_rss_kb()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
