// A prototype, not Imago's pipeline: what a planar path would save per image on `make bench-serve`'s cold row.
//
//   rgba:   TurboJPEG decode at the power-of-two DCT scale covering the fit (TJPF_RGBA, as Imago decodes), area
//           average to the fit, WebP import of RGBA straight to YUV 4:2:0 (use_argb = 0), encode q Q method 4;
//   planar: TurboJPEG decode at the same scale to its Y, Cb, Cr planes (tjDecompressToYUVPlanes: no colour
//           conversion, no chroma upsampling), area average each plane to the fit (chroma to half the fit,
//           WebP's 4:2:0), mapped from JPEG's full range to the video range libwebp's own RGB->YUV gives
//           (Y 16..235, U/V 16..240), written into the WebPPicture's planes, encode with the same settings.
// Both use the same area average (box filter with fractional edges). CPU time per stage with
// CLOCK_THREAD_CPUTIME_ID, PASSES passes, the lowest pass total kept. Quality: each output decoded to RGB
// (WebPDecodeRGB) and compared, PSNR over all pixels of all images, with the other path's output and with the
// reference (the RGB decode at the same scale, area-averaged to the fit, not encoded).
//
// Usage: serve-planar BOX QUALITY PASSES FILE...
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include "bench-files.h"

static void fitted(int w, int h, int box, int *fw, int *fh) {
    if (w <= box && h <= box) {
        *fw = w, *fh = h;
    } else if (w >= h) {
        *fw = box, *fh = (2 * h * box + w) / (2 * w);
    } else {
        *fh = box, *fw = (2 * w * box + h) / (2 * h);
    }
    if (*fw < 1) *fw = 1;
    if (*fh < 1) *fh = 1;
}

// Area average of `channels` interleaved channels (the first `used` of them written) from sw×sh (stride
// sstride) to dw×dh (stride dstride); each output value is mapped to `offset + value × scale` (0, 1: unchanged)
// before it is rounded.
static void area_average(const uint8_t *src, int sw, int sh, int sstride, int channels, int used, uint8_t *dst,
                         int dw, int dh, int dstride, float offset, float scale, float *row) {
    const double sx = (double)sw / dw, sy = (double)sh / dh;
    const float norm = (float)(scale / (sx * sy));
    for (int y = 0; y < dh; y++) {
        double y0 = y * sy, y1 = y0 + sy;
        memset(row, 0, sizeof(float) * channels * sw);
        for (int yy = (int)y0; yy < sh && yy < y1; yy++) {
            float wy = (float)((yy + 1 < y1 ? yy + 1 : y1) - (yy > y0 ? yy : y0));
            const uint8_t *s = src + (size_t)yy * sstride;
            for (int i = 0; i < channels * sw; i++) row[i] += s[i] * wy;
        }
        for (int x = 0; x < dw; x++) {
            double x0 = x * sx, x1 = x0 + sx;
            float acc[4] = {0, 0, 0, 0};
            for (int xx = (int)x0; xx < sw && xx < x1; xx++) {
                float wx = (float)((xx + 1 < x1 ? xx + 1 : x1) - (xx > x0 ? xx : x0));
                for (int c = 0; c < used; c++) acc[c] += row[channels * xx + c] * wx;
            }
            for (int c = 0; c < used; c++) {
                float v = acc[c] * norm + offset + 0.5f;
                dst[(size_t)y * dstride + (size_t)x * used + c] = (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v);
            }
        }
    }
}

struct stages {
    double decode, resample, encode;
};

static int encode_picture(WebPConfig *config, WebPPicture *picture, WebPMemoryWriter *writer) {
    WebPMemoryWriterInit(writer);
    picture->writer = WebPMemoryWrite;
    picture->custom_ptr = writer;
    return WebPEncode(config, picture);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: serve-planar BOX QUALITY PASSES FILE...\n");
        return 2;
    }
    const int box = atoi(argv[1]), passes = atoi(argv[3]), count = argc - 4;
    unsigned char **data = calloc((size_t)count, sizeof(*data));
    size_t *sizes = calloc((size_t)count, sizeof(*sizes));
    for (int i = 0; i < count; i++)
        if (!(data[i] = read_file(argv[4 + i], &sizes[i]))) return 1;
    // JPEG's full range -> the video range of libwebp's RGB->YUV: Y 16 + 219/255 y, U/V 128 + 224/255 (c - 128).
    const float luma_scale = 219.0f / 255, chroma_scale = 224.0f / 255, chroma_offset = 128 - 128 * chroma_scale;
    int nscales = 0;
    tjscalingfactor *scales = tjGetScalingFactors(&nscales);
    tjhandle handle = tjInitDecompress();
    WebPConfig config;
    if (!handle || !WebPConfigInit(&config)) return 1;
    config.quality = (float)atof(argv[2]);
    config.method = 4;
    double best[2] = {1e300, 1e300};
    struct stages kept[2];
    size_t bytes[2] = {0, 0};
    double sq_cross = 0, sq_ref[2] = {0, 0}, samples = 0;
    float *row = malloc(sizeof(float) * 4 * 8192);
    for (int pass = 0; pass < passes; pass++) {
        struct stages sum[2] = {{0, 0, 0}, {0, 0, 0}};
        for (int i = 0; i < count; i++) {
            int w, h, sub, cs;
            if (tjDecompressHeader3(handle, data[i], sizes[i], &w, &h, &sub, &cs) != 0) return 1;
            int fw, fh, dw = w, dh = h;
            fitted(w, h, box, &fw, &fh);
            for (int s = 0; s < nscales; s++) {
                int num = scales[s].num, den = scales[s].denom;
                if (num > den || (8 * num) % den != 0 || __builtin_popcount(8 * num / den) != 1) continue;
                int sw = TJSCALED(w, scales[s]), shh = TJSCALED(h, scales[s]);
                if (sw >= fw && shh >= fh && sw * shh < dw * dh) dw = sw, dh = shh;
            }
            WebPMemoryWriter out[2];
            // rgba
            double t0 = thread_ms();
            uint8_t *rgba = malloc((size_t)dw * dh * 4);
            if (tjDecompress2(handle, data[i], sizes[i], rgba, dw, dw * 4, dh, TJPF_RGBA, 0) != 0) return 1;
            double t1 = thread_ms();
            uint8_t *fit = malloc((size_t)fw * fh * 4);
            area_average(rgba, dw, dh, dw * 4, 4, 4, fit, fw, fh, fw * 4, 0, 1, row);
            double t2 = thread_ms();
            WebPPicture picture;
            WebPPictureInit(&picture);
            picture.use_argb = 0, picture.width = fw, picture.height = fh;
            if (!WebPPictureImportRGBA(&picture, fit, fw * 4) || !encode_picture(&config, &picture, &out[0])) return 1;
            WebPPictureFree(&picture);
            double t3 = thread_ms();
            free(fit);
            free(rgba);
            sum[0].decode += t1 - t0, sum[0].resample += t2 - t1, sum[0].encode += t3 - t2;
            // planar
            t0 = thread_ms();
            int pw[3], ph[3];
            unsigned char *planes[3];
            for (int c = 0; c < 3; c++) {
                pw[c] = tjPlaneWidth(c, dw, sub), ph[c] = tjPlaneHeight(c, dh, sub);
                planes[c] = malloc((size_t)pw[c] * ph[c]);
            }
            if (tjDecompressToYUVPlanes(handle, data[i], sizes[i], planes, dw, NULL, dh, 0) != 0) return 1;
            t1 = thread_ms();
            WebPPictureInit(&picture);
            picture.use_argb = 0, picture.colorspace = WEBP_YUV420, picture.width = fw, picture.height = fh;
            if (!WebPPictureAlloc(&picture)) return 1;
            area_average(planes[0], pw[0], ph[0], pw[0], 1, 1, picture.y, fw, fh, picture.y_stride, 16, luma_scale, row);
            area_average(planes[1], pw[1], ph[1], pw[1], 1, 1, picture.u, (fw + 1) / 2, (fh + 1) / 2,
                         picture.uv_stride, chroma_offset, chroma_scale, row);
            area_average(planes[2], pw[2], ph[2], pw[2], 1, 1, picture.v, (fw + 1) / 2, (fh + 1) / 2,
                         picture.uv_stride, chroma_offset, chroma_scale, row);
            t2 = thread_ms();
            if (!encode_picture(&config, &picture, &out[1])) return 1;
            WebPPictureFree(&picture);
            t3 = thread_ms();
            for (int c = 0; c < 3; c++) free(planes[c]);
            sum[1].decode += t1 - t0, sum[1].resample += t2 - t1, sum[1].encode += t3 - t2;
            if (pass == 0) {  // quality, once
                uint8_t *ref8 = malloc((size_t)dw * dh * 3), *ref = malloc((size_t)fw * fh * 3);
                tjDecompress2(handle, data[i], sizes[i], ref8, dw, dw * 3, dh, TJPF_RGB, 0);
                area_average(ref8, dw, dh, dw * 3, 3, 3, ref, fw, fh, fw * 3, 0, 1, row);
                int ow, oh;
                uint8_t *a = WebPDecodeRGB(out[0].mem, out[0].size, &ow, &oh);
                uint8_t *b = WebPDecodeRGB(out[1].mem, out[1].size, &ow, &oh);
                for (size_t k = 0; k < (size_t)fw * fh * 3; k++) {
                    double d = (double)a[k] - b[k], da = (double)a[k] - ref[k], db = (double)b[k] - ref[k];
                    sq_cross += d * d, sq_ref[0] += da * da, sq_ref[1] += db * db;
                }
                samples += (double)fw * fh * 3;
                WebPFree(a), WebPFree(b), free(ref8), free(ref);
            }
            for (int p = 0; p < 2; p++) {
                if (pass == 0) bytes[p] += out[p].size;
                WebPMemoryWriterClear(&out[p]);
            }
        }
        for (int p = 0; p < 2; p++) {
            double total = (sum[p].decode + sum[p].resample + sum[p].encode) / count;
            if (total < best[p]) best[p] = total, kept[p] = sum[p];
        }
    }
    const char *names[2] = {"rgba", "planar"};
    for (int p = 0; p < 2; p++)
        printf("RESULT path=%s ms_per_image=%.3f decode=%.3f resample=%.3f encode=%.3f bytes=%zu\n", names[p], best[p],
               kept[p].decode / count, kept[p].resample / count, kept[p].encode / count, bytes[p]);
    printf("RESULT saved_ms=%.3f psnr_planar_vs_rgba=%.2f psnr_rgba_vs_reference=%.2f "
           "psnr_planar_vs_reference=%.2f\n",
           best[0] - best[1], 10 * log10(255.0 * 255 / (sq_cross / samples)),
           10 * log10(255.0 * 255 / (sq_ref[0] / samples)), 10 * log10(255.0 * 255 / (sq_ref[1] / samples)));
    return 0;
}
