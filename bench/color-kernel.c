// The colour kernel alone (CColorKernel), outside Swift: accuracy over all 2^24 colours against lcms2 and speed
// in ns a pixel. Build and run (from the project root):
//   clang -O2 -ISources/CColorKernel/include bench/color-kernel.c Sources/CColorKernel/ColorKernel.c \
//     -llcms2 -lm -o /tmp/color-kernel
//   chrt -f 50 /tmp/color-kernel ../shared/corpus/icc/gen-kodim03-displayp3-v4.jpg [variant] [rounds]
// variant: 1 half floats (AVX-512 FP16), 2 single precision, 0 the kernel's own choice. The profile is read from
// the JPEG's APP2 ICC_PROFILE segments (or, for the file name `gammas`, built with a different curve a channel); the reference is lcms2's 8-bit RGBA transform, relative colorimetric,
// as MatrixShaperTransformTests makes it. Timing: 2-row calls of 4,032 pixels (one strip of a 12 MP decode in
// L1), best of `rounds` passes over 12 MP.
#include <lcms2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "CColorKernel.h"
#include "bench-files.h"

static unsigned char *read_icc(const char *path, size_t *size) {
    size_t file_size;
    unsigned char *data = read_file(path, &file_size);
    if (!data) return NULL;
    long n = (long)file_size;
    unsigned char *icc = malloc((size_t)n);
    *size = 0;
    for (long i = 2; i + 4 < n;) {
        if (data[i] != 0xFF) break;
        int marker = data[i + 1], length = data[i + 2] << 8 | data[i + 3];
        if (marker == 0xDA) break;
        if (marker == 0xE2 && length > 16 && memcmp(data + i + 4, "ICC_PROFILE", 12) == 0) {
            memcpy(icc + *size, data + i + 18, (size_t)length - 16);  // segments assumed in order
            *size += (size_t)length - 16;
        }
        i += 2 + length;
    }
    free(data);
    return *size ? icc : NULL;
}

static void colorants(cmsHPROFILE p, double m[9]) {
    cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag};
    for (int j = 0; j < 3; j++) {
        cmsCIEXYZ *xyz = cmsReadTag(p, tags[j]);
        m[j] = xyz->X;
        m[3 + j] = xyz->Y;
        m[6 + j] = xyz->Z;
    }
}

static void inverse(const double m[9], double r[9]) {
    double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5], g = m[6], h = m[7], k = m[8];
    double det = a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g);
    double t[9] = {e * k - f * h, c * h - b * k, b * f - c * e, f * g - d * k, a * k - c * g, c * d - a * f,
        d * h - e * g, b * g - a * h, a * e - b * d};
    for (int i = 0; i < 9; i++) r[i] = t[i] / det;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int variant = argc > 2 ? atoi(argv[2]) : 0, rounds = argc > 3 ? atoi(argv[3]) : 30;
    size_t size;
    cmsHPROFILE source, srgb = cmsCreate_sRGBProfile();
    if (strcmp(argv[1], "gammas") == 0) {
        // A profile whose channels have different curves (gamma 2.2, 1.8, 2.4; Display P3's primaries, D50): the
        // kernels' per-channel table path.
        cmsCIExyY white = {0.3457, 0.3585, 1};
        cmsCIExyYTRIPLE primaries = {{0.680, 0.320, 1}, {0.265, 0.690, 1}, {0.150, 0.060, 1}};
        cmsToneCurve *curves[3] = {cmsBuildGamma(NULL, 2.2), cmsBuildGamma(NULL, 1.8), cmsBuildGamma(NULL, 2.4)};
        source = cmsCreateRGBProfile(&white, &primaries, curves);
    } else {
        unsigned char *icc = read_icc(argv[1], &size);
        if (!icc) return fprintf(stderr, "no ICC profile\n"), 1;
        source = cmsOpenProfileFromMem(icc, (cmsUInt32Number)size);
    }
    cmsHTRANSFORM transform = cmsCreateTransform(source, TYPE_RGBA_8, srgb, TYPE_RGBA_8,
        INTENT_RELATIVE_COLORIMETRIC, cmsFLAGS_NOCACHE | cmsFLAGS_COPY_ALPHA);
    double s[9], d[9], inv[9], m[9];
    colorants(source, s);
    colorants(srgb, d);
    inverse(d, inv);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m[3 * i + j] = inv[3 * i] * s[j] + inv[3 * i + 1] * s[3 + j] + inv[3 * i + 2] * s[6 + j];
    float curves[768];
    cmsTagSignature trc[3] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 256; i++) curves[256 * c + i] = cmsEvalToneCurveFloat(cmsReadTag(source, trc[c]), i / 255.0f);
    cimago_color_tables tables;
    if (!cimago_color_kernel_prepare(&tables, curves, m)) return fprintf(stderr, "prepare failed\n"), 1;
    if (variant) tables.variant = variant;
    printf("variants %d, running %d, same curves %d, clamps top %d\n", cimago_color_kernel_variants(),
        tables.variant, tables.same_curves, tables.clamps_top);

    // Accuracy: all 2^24 colours, alpha varied.
    size_t n = (size_t)1 << 24;
    unsigned char *in = malloc(4 * n), *ours = malloc(4 * n), *ref = malloc(4 * n);
    for (size_t i = 0; i < n; i++) {
        in[4 * i] = (unsigned char)(i >> 16);
        in[4 * i + 1] = (unsigned char)(i >> 8);
        in[4 * i + 2] = (unsigned char)i;
        in[4 * i + 3] = (unsigned char)(i * 7);
    }
    memcpy(ours, in, 4 * n);
    cimago_color_kernel_convert(&tables, ours, n);
    cmsDoTransform(transform, in, ref, (cmsUInt32Number)n);
    long histogram[4] = {0}, total = 0, alpha = 0;
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            int e = abs(ours[4 * i + c] - ref[4 * i + c]);
            histogram[e > 3 ? 3 : e]++;
            total += e;
        }
        alpha += ours[4 * i + 3] != in[4 * i + 3];
    }
    printf("vs lcms2: off by 0: %ld, 1: %ld, 2: %ld, 3+: %ld; mean %.4f; alpha changed %ld\n", histogram[0],
        histogram[1], histogram[2], histogram[3], (double)total / (3.0 * n), alpha);
    // Ragged counts equal a long run.
    for (size_t count = 1; count < 200; count += 7) {
        unsigned char a[4 * 256], b[4 * 256];
        memcpy(a, in + 4 * 12345, sizeof a);
        memcpy(b, a, sizeof b);
        cimago_color_kernel_convert(&tables, a, 256);
        cimago_color_kernel_convert(&tables, b, count);
        if (memcmp(a, b, 4 * count) || memcmp(b + 4 * count, in + 4 * 12345 + 4 * count, 4 * (256 - count)))
            printf("ragged count %zu differs\n", count);
    }

    // Speed: 12 MP (4032 × 3024) of varied pixels converted in 2-row calls; each call's rows are converted again
    // and again, so the best pass is the kernel in cache.
    size_t width = 4032, pixels = width * 3024;
    unsigned char *image = malloc(4 * pixels);
    for (size_t i = 0; i < pixels; i++) memcpy(image + 4 * i, in + 4 * ((i * 2654435761u) % n), 4);
    double best = 1e9;
    for (int r = 0; r < rounds; r++) {
        double t = now();
        for (size_t row = 0; row < 3024; row += 2) cimago_color_kernel_convert(&tables, image + 4 * row * width, 2 * width);
        t = now() - t;
        best = t < best ? t : best;
    }
    printf("speed: %.3f ns a pixel (best of %d, 12 MP in 2-row calls: %.2f ms)\n", best / pixels * 1e9, rounds, best * 1e3);
    return 0;
}
