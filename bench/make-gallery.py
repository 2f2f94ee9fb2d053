#!/usr/bin/env python3
"""Builds the benchmark workload from ../shared/corpus/kodak, reproducibly (fixed sizes, quality 85).

gallery/jpeg/NNN.jpg: 500 JPEGs at several sizes (the 24 Kodak photos × 5 scales, cycled), quality 85;
gallery/png/ and gallery/webp/: PNG and WebP variants of the first 24; urls are listed by the caller;
gallery/large-baseline.jpg: formats/TestImageLarge.jpg re-encoded as a baseline JPEG (quality 85, 4:2:0).
"""
import os
import sys

from PIL import Image

corpus, out = sys.argv[1], sys.argv[2]
sources = sorted(f for f in os.listdir(corpus) if f.lower().endswith(".png"))
if not sources:
    sys.exit(f"no PNGs in {corpus}")
scales = [1.0, 0.75, 1.25, 0.5, 1.5]
for sub in ("jpeg", "png", "webp"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)
images = [Image.open(os.path.join(corpus, f)).convert("RGB") for f in sources]
for i in range(500):
    path = os.path.join(out, "jpeg", f"{i:03d}.jpg")
    if os.path.exists(path):
        continue
    im = images[i % len(images)]
    s = scales[(i // len(images)) % len(scales)]
    w, h = int(im.width * s), int(im.height * s)
    im.resize((w, h), Image.LANCZOS).save(path, "JPEG", quality=85)
for i, im in enumerate(images):
    png = os.path.join(out, "png", f"{i:03d}.png")
    if not os.path.exists(png):
        im.save(png, "PNG")
    webp = os.path.join(out, "webp", f"{i:03d}.webp")
    if not os.path.exists(webp):
        im.save(webp, "WEBP", quality=85)
    webpl = os.path.join(out, "webp", f"{i:03d}-lossless.webp")
    if not os.path.exists(webpl):
        im.save(webpl, "WEBP", lossless=True)
# A baseline (sequential) twin of formats/TestImageLarge.jpg (which is progressive 4:4:4) for the memory bench.
large = os.path.join(os.path.dirname(os.path.abspath(corpus)), "formats", "TestImageLarge.jpg")
twin = os.path.join(out, "large-baseline.jpg")
if os.path.exists(large) and not os.path.exists(twin):
    Image.open(large).convert("RGB").save(twin, "JPEG", quality=85, progressive=False)
print(f"gallery ready in {out}")
# gallery/photos/NNN.jpg (issue 23's fetch benchmark): 300 photos from 768x512 to 3072x2048 (the Kodak images at
# 1x, 2x, 3x and 4x, cycled; portrait ones stay portrait), quality 85, baseline, as a camera or a CMS serves them.
os.makedirs(os.path.join(out, "photos"), exist_ok=True)
for i in range(300):
    path = os.path.join(out, "photos", f"{i:03d}.jpg")
    if os.path.exists(path):
        continue
    im = images[i % len(images)]
    s = (1, 2, 3, 4)[(i // len(images)) % 4]
    im.resize((im.width * s, im.height * s), Image.LANCZOS).save(path, "JPEG", quality=85)
print(f"photos ready in {out}/photos")
