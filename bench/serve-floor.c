// The codec floor of `make bench-serve`'s cold row: the CPU per image of only the codec work any server must do
// for it at thumbor's encoder settings, single thread, no server, no I/O. For each JPEG (read into memory first):
//   decode: libjpeg-turbo (TurboJPEG) at the smallest power-of-two DCT scale (1/8, 1/4, 1/2, 1) that covers the
//           aspect fit of the box (as Imago and Pillow's draft choose), to RGB (3 bytes a pixel, the cheapest
//           output libjpeg-turbo has: no alpha byte to write);
//   encode: libwebp lossy at quality Q, method 4 (Pillow's defaults, thumbor's settings), RGB imported straight to
//           YUV (use_argb = 0; libwebp's SIMD RGB24 conversion), written to memory.
// Between them the decoded image is area-averaged to the fitted size (box filter, untimed in the floor: it is
// not codec work; its time is printed apart). CPU time is CLOCK_THREAD_CPUTIME_ID around each step.
// PASSES passes over all files; a pass's figure is its mean per image; the floor is the lowest pass total.
//
// Usage: serve-floor BOX QUALITY PASSES FILE...
// Prints: RESULT floor_ms=… decode_ms=… encode_ms=… resample_ms=… bytes=… passes=a/b/c (totals per pass)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/encode.h>

#include "bench-files.h"

// Imago's PixelSize.fitted(within:): aspect fit, rounded to the nearest pixel, never upscaled.
static void fitted(int w, int h, int box, int *fw, int *fh) {
    if (w <= box && h <= box) {
        *fw = w, *fh = h;
    } else if ((double)w * box >= (double)h * box) {
        *fw = box, *fh = (2 * h * box + w) / (2 * w);
        if (*fh < 1) *fh = 1;
    } else {
        *fh = box, *fw = (2 * w * box + h) / (2 * h);
        if (*fw < 1) *fw = 1;
    }
}

// Area average of a 3-channel image from sw×sh to dw×dh (dw ≤ sw, dh ≤ sh): each output pixel is the mean of the
// source area it covers, fractional edges weighted.
static void area_average(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh, float *row) {
    const double sx = (double)sw / dw, sy = (double)sh / dh;
    for (int y = 0; y < dh; y++) {
        double y0 = y * sy, y1 = y0 + sy;
        memset(row, 0, sizeof(float) * 3 * sw);
        for (int yy = (int)y0; yy < sh && yy < y1; yy++) {
            double wy = (yy + 1 < y1 ? yy + 1 : y1) - (yy > y0 ? yy : y0);
            const uint8_t *s = src + (size_t)yy * sw * 3;
            for (int i = 0; i < 3 * sw; i++) row[i] += (float)(s[i] * wy);
        }
        for (int x = 0; x < dw; x++) {
            double x0 = x * sx, x1 = x0 + sx;
            float acc[3] = {0, 0, 0};
            for (int xx = (int)x0; xx < sw && xx < x1; xx++) {
                float wx = (float)((xx + 1 < x1 ? xx + 1 : x1) - (xx > x0 ? xx : x0));
                acc[0] += row[3 * xx] * wx, acc[1] += row[3 * xx + 1] * wx, acc[2] += row[3 * xx + 2] * wx;
            }
            float norm = (float)(1.0 / (sx * sy));
            for (int c = 0; c < 3; c++) {
                float v = acc[c] * norm + 0.5f;
                dst[((size_t)y * dw + x) * 3 + c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: serve-floor BOX QUALITY PASSES FILE...\n");
        return 2;
    }
    const int box = atoi(argv[1]), passes = atoi(argv[3]), count = argc - 4;
    const float quality = (float)atof(argv[2]);
    unsigned char **data = calloc((size_t)count, sizeof(*data));
    size_t *sizes = calloc((size_t)count, sizeof(*sizes));
    for (int i = 0; i < count; i++) {
        if (!(data[i] = read_file(argv[4 + i], &sizes[i]))) {
            fprintf(stderr, "serve-floor: cannot read %s\n", argv[4 + i]);
            return 1;
        }
    }
    int nscales = 0;
    tjscalingfactor *scales = tjGetScalingFactors(&nscales);
    tjhandle handle = tjInitDecompress();
    WebPConfig config;
    if (!handle || !WebPConfigInit(&config)) return 1;
    config.quality = quality;
    config.method = 4;
    if (!WebPValidateConfig(&config)) return 1;

    double best = 1e300, best_decode = 0, best_encode = 0, best_resample = 0;
    size_t bytes = 0;
    char totals[1024] = "";
    for (int pass = 0; pass < passes; pass++) {
        double decode = 0, encode = 0, resample = 0;
        bytes = 0;
        for (int i = 0; i < count; i++) {
            double t0 = thread_ms();
            int w, h, sub, cs;
            if (tjDecompressHeader3(handle, data[i], sizes[i], &w, &h, &sub, &cs) != 0) return 1;
            int fw, fh;
            fitted(w, h, box, &fw, &fh);
            int dw = w, dh = h;  // the smallest power-of-two scale that covers (fw, fh)
            for (int s = 0; s < nscales; s++) {
                int num = scales[s].num, den = scales[s].denom;
                if (num > den || (8 * num) % den != 0 || __builtin_popcount(8 * num / den) != 1) continue;
                int sw = TJSCALED(w, scales[s]), sh = TJSCALED(h, scales[s]);
                if (sw >= fw && sh >= fh && sw * sh < dw * dh) dw = sw, dh = sh;
            }
            uint8_t *decoded = malloc((size_t)dw * dh * 3);
            if (tjDecompress2(handle, data[i], sizes[i], decoded, dw, dw * 3, dh, TJPF_RGB, 0) != 0) return 1;
            double t1 = thread_ms();
            uint8_t *fit = decoded;
            if (fw != dw || fh != dh) {
                fit = malloc((size_t)fw * fh * 3);
                float *row = malloc(sizeof(float) * 3 * dw);
                area_average(decoded, dw, dh, fit, fw, fh, row);
                free(row);
            }
            double t2 = thread_ms();
            WebPPicture picture;
            WebPMemoryWriter writer;
            if (!WebPPictureInit(&picture)) return 1;
            picture.use_argb = 0;
            picture.width = fw;
            picture.height = fh;
            WebPMemoryWriterInit(&writer);
            picture.writer = WebPMemoryWrite;
            picture.custom_ptr = &writer;
            if (!WebPPictureImportRGB(&picture, fit, fw * 3) || !WebPEncode(&config, &picture)) return 1;
            bytes += writer.size;
            WebPPictureFree(&picture);
            WebPMemoryWriterClear(&writer);
            double t3 = thread_ms();
            if (fit != decoded) free(fit);
            free(decoded);
            decode += t1 - t0, resample += t2 - t1, encode += t3 - t2;
        }
        double total = (decode + encode) / count;
        size_t used = strlen(totals);
        snprintf(totals + used, sizeof(totals) - used, "%s%.3f", pass ? "/" : "", total);
        if (total < best) {
            best = total, best_decode = decode / count, best_encode = encode / count;
            best_resample = resample / count;
        }
    }
    printf("RESULT floor_ms=%.3f decode_ms=%.3f encode_ms=%.3f resample_ms=%.3f bytes=%zu images=%d passes=%s\n",
           best, best_decode, best_encode, best_resample, bytes, count, totals);
    tjDestroy(handle);
    return 0;
}
