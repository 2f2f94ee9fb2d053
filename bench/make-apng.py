"""make-apng.py KODAK_DIR OUT.png: a realistic animated PNG for the APNG decode benchmark: 8 Kodak photos
(768x512, RGB) as the frames of one APNG written by Pillow's encoder (which stores each frame as the region that
changed, blended over the previous one), 100 ms per frame, looping forever. Rewritten only when missing."""
import os
import sys

from PIL import Image

kodak, out = sys.argv[1], sys.argv[2]
if not os.path.exists(out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    frames = [Image.open(os.path.join(kodak, f"{i:02d}.png")).convert("RGB") for i in range(1, 9)]
    frames = [f if f.size == (768, 512) else f.transpose(Image.Transpose.ROTATE_90) for f in frames]
    frames[0].save(out, save_all=True, append_images=frames[1:], duration=100, loop=0)
print(out)
