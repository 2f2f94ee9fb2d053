// Imago's HEVC decoder plugin for libheif 1.15 (see include/CHEIFPlugin.h for why), over libde265.
#include "CHEIFPlugin.h"

#include <libde265/de265.h>
#include <libheif/heif_plugin.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------------------------
// Imago's HEVC decoder plugin for libheif 1.15 (registered per context with heif_register_decoder).
//
// Why: libheif 1.15's decode_image_planar converts every decoded HEVC image to planar RGB 4:4:4 with a scalar
// float loop (one more full copy of the YCbCr planes first), whatever output was asked for; and its libde265
// plugin decodes on a worker thread. This plugin decodes on the calling thread, and for 8-bit 4:2:0 / 4:2:2 /
// 4:4:4 with a matrix it knows converts libde265's own planes straight to the RGB 4:4:4 planes libheif wants
// (integer fixed point, a loop the compiler vectorises). libheif then has nothing left to convert when asked for
// RGB 4:4:4; grids and transforms work on those planes as before. Anything else is handed back as YCbCr exactly
// as libheif's own plugin does, and libheif converts it.
//
// The matrix is that of the item's `colr` nclx when it has one (libheif overrides the bitstream's with it), else
// the bitstream's VUI: the Swift side sets it for the calling thread (imago_heif_job_begin) before
// heif_decode_image, with the context's decoding threads at 0 so that every tile is decoded on this thread.
// Without a job (another thread) the plugin hands back YCbCr.
// ---------------------------------------------------------------------------------------------------------------

/// The colour description the plugin converts with, for the decode running on this thread.
typedef struct {
    int active;
    int hasNclx;
    int matrix;
    int fullRange;
} imago_heif_job;

static _Thread_local imago_heif_job imago_heif_current_job;

/// Sets the colour description for the next decodes on this thread (the item's `colr` nclx, if any).
void imago_heif_job_begin(int hasNclx, int matrix, int fullRange) {
    imago_heif_current_job.active = 1;
    imago_heif_current_job.hasNclx = hasNclx;
    imago_heif_current_job.matrix = matrix;
    imago_heif_current_job.fullRange = fullRange;
}

/// Clears this thread's job.
void imago_heif_job_end(void) { memset(&imago_heif_current_job, 0, sizeof imago_heif_current_job); }

typedef struct {
    de265_decoder_context *ctx;
} imago_heif_de265;

static const char *imago_heif_plugin_name(void) { return "Imago libde265 (calling thread, direct RGB)"; }

static int imago_heif_supports(enum heif_compression_format format) {
    return format == heif_compression_HEVC ? 200 : 0;
}

static struct heif_error imago_heif_ok(void) {
    struct heif_error error = {heif_error_Ok, heif_suberror_Unspecified, "Success"};
    return error;
}

static struct heif_error imago_heif_failure(enum heif_suberror_code subcode, const char *message) {
    struct heif_error error = {heif_error_Decoder_plugin_error, subcode, message};
    return error;
}

static struct heif_error imago_heif_new_decoder(void **decoder) {
    imago_heif_de265 *d = (imago_heif_de265 *)calloc(1, sizeof(imago_heif_de265));
    if (!d) return imago_heif_failure(heif_suberror_Unspecified, "out of memory");
    d->ctx = de265_new_decoder();
    if (!d->ctx) {
        free(d);
        return imago_heif_failure(heif_suberror_Unspecified, "libde265 could not create a decoder");
    }
    // No worker threads: libde265 then decodes on the calling thread, without hand-over costs.
    *decoder = d;
    return imago_heif_ok();
}

static void imago_heif_free_decoder(void *decoder) {
    imago_heif_de265 *d = (imago_heif_de265 *)decoder;
    if (!d) return;
    de265_free_decoder(d->ctx);
    free(d);
}

/// libheif hands over the hvcC parameter sets and the item's data as 4-byte-length-prefixed NAL units.
static struct heif_error imago_heif_push_data(void *decoder, const void *data, size_t size) {
    imago_heif_de265 *d = (imago_heif_de265 *)decoder;
    const uint8_t *bytes = (const uint8_t *)data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4) return imago_heif_failure(heif_suberror_End_of_data, "truncated NAL length");
        uint32_t length = ((uint32_t)bytes[at] << 24) | ((uint32_t)bytes[at + 1] << 16) |
                          ((uint32_t)bytes[at + 2] << 8) | (uint32_t)bytes[at + 3];
        at += 4;
        if (length > size - at) return imago_heif_failure(heif_suberror_End_of_data, "truncated NAL unit");
        de265_push_NAL(d->ctx, bytes + at, length, 0, NULL);
        at += length;
    }
    return imago_heif_ok();
}

/// YCbCr → RGB in 14-bit fixed point: R = Y' + rcr·Cr', G = Y' + gcb·Cb' + gcr·Cr', B = Y' + bcb·Cb'.
typedef struct {
    int32_t y, yOffset, rcr, gcb, gcr, bcb;
} imago_heif_coefficients;

/// libheif 1.15's coefficients (nclx.cc) for `matrix`, 0 when this path does not take it (identity, YCgCo,
/// the primaries-derived ones: libheif converts those).
static int imago_heif_coefficients_for(int matrix, int fullRange, imago_heif_coefficients *out) {
    float kr, kb;
    switch (matrix) {
    case 1: kr = 0.2126f; kb = 0.0722f; break;
    case 4: kr = 0.30f; kb = 0.11f; break;
    case 5: case 6: kr = 0.299f; kb = 0.114f; break;
    case 7: kr = 0.212f; kb = 0.087f; break;
    case 9: case 10: kr = 0.2627f; kb = 0.0593f; break;
    case 2: kr = 0.299f; kb = 0.114f; break;  // unspecified: libheif's defaults, BT.601
    default: return 0;
    }
    float rcr = 2 * (1 - kr), bcb = 2 * (1 - kb);
    float gcb = 2 * kb * (1 - kb) / (kb + kr - 1), gcr = 2 * kr * (1 - kr) / (kb + kr - 1);
    float ys = 1.0f, cs = 1.0f;
    out->yOffset = 0;
    if (!fullRange) {  // libheif's limited-range scale factors
        ys = 1.1689f;
        cs = 1.1429f;
        out->yOffset = 16;
    }
    const float one = 16384.0f;
    out->y = (int32_t)(ys * one + 0.5f);
    out->rcr = (int32_t)(rcr * cs * one + (rcr >= 0 ? 0.5f : -0.5f));
    out->gcb = (int32_t)(gcb * cs * one + (gcb >= 0 ? 0.5f : -0.5f));
    out->gcr = (int32_t)(gcr * cs * one + (gcr >= 0 ? 0.5f : -0.5f));
    out->bcb = (int32_t)(bcb * cs * one + (bcb >= 0 ? 0.5f : -0.5f));
    return 1;
}

static uint8_t imago_heif_clamp8(int32_t v) { return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v)); }

/// One row: `cb`/`cr` already at full width.
static void imago_heif_convert_row(const uint8_t *restrict y, const uint8_t *restrict cb,
                                          const uint8_t *restrict cr, uint8_t *restrict r, uint8_t *restrict g,
                                          uint8_t *restrict b, int width, const imago_heif_coefficients *k) {
    const int32_t ky = k->y, off = k->yOffset, rcr = k->rcr, gcb = k->gcb, gcr = k->gcr, bcb = k->bcb;
    for (int x = 0; x < width; x++) {
        int32_t yy = ((int32_t)y[x] - off) * ky + 8192;
        int32_t u = (int32_t)cb[x] - 128, v = (int32_t)cr[x] - 128;
        r[x] = imago_heif_clamp8((yy + rcr * v) >> 14);
        g[x] = imago_heif_clamp8((yy + gcb * u + gcr * v) >> 14);
        b[x] = imago_heif_clamp8((yy + bcb * u) >> 14);
    }
}

/// Nearest-neighbour chroma upsampling of one row to full width (as libheif 1.15 does).
static void imago_heif_upsample_row(const uint8_t *restrict in, uint8_t *restrict out, int width, int shift) {
    if (shift == 0) {
        memcpy(out, in, (size_t)width);
        return;
    }
    for (int x = 0; x < width; x++) out[x] = in[x >> 1];
}

/// libde265's 8-bit picture straight to a new RGB 4:4:4 heif_image; 0 when this path does not take it.
static int imago_heif_picture_to_rgb(const struct de265_image *picture, const imago_heif_coefficients *k,
                                            struct heif_image **out) {
    enum de265_chroma chroma = de265_get_chroma_format(picture);
    if (chroma != de265_chroma_420 && chroma != de265_chroma_422 && chroma != de265_chroma_444) return 0;
    for (int c = 0; c < 3; c++) {
        if (de265_get_bits_per_pixel(picture, c) != 8) return 0;
    }
    int width = de265_get_image_width(picture, 0), height = de265_get_image_height(picture, 0);
    int chromaWidth = de265_get_image_width(picture, 1), chromaHeight = de265_get_image_height(picture, 1);
    if (width <= 0 || height <= 0 || chromaWidth <= 0 || chromaHeight <= 0) return 0;
    int shiftH = chroma == de265_chroma_444 ? 0 : 1, shiftV = chroma == de265_chroma_420 ? 1 : 0;
    if (((width + shiftH) >> shiftH) > chromaWidth || ((height + shiftV) >> shiftV) > chromaHeight) return 0;
    int yStride, cbStride, crStride;
    const uint8_t *yPlane = de265_get_image_plane(picture, 0, &yStride);
    const uint8_t *cbPlane = de265_get_image_plane(picture, 1, &cbStride);
    const uint8_t *crPlane = de265_get_image_plane(picture, 2, &crStride);
    if (!yPlane || !cbPlane || !crPlane) return 0;

    struct heif_image *image = NULL;
    if (heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_444, &image).code != heif_error_Ok) return 0;
    if (heif_image_add_plane(image, heif_channel_R, width, height, 8).code != heif_error_Ok ||
        heif_image_add_plane(image, heif_channel_G, width, height, 8).code != heif_error_Ok ||
        heif_image_add_plane(image, heif_channel_B, width, height, 8).code != heif_error_Ok) {
        heif_image_release(image);
        return 0;
    }
    int rStride, gStride, bStride;
    uint8_t *r = heif_image_get_plane(image, heif_channel_R, &rStride);
    uint8_t *g = heif_image_get_plane(image, heif_channel_G, &gStride);
    uint8_t *b = heif_image_get_plane(image, heif_channel_B, &bStride);
    uint8_t *rows = (uint8_t *)malloc((size_t)width * 2);
    if (!r || !g || !b || !rows) {
        free(rows);
        heif_image_release(image);
        return 0;
    }
    uint8_t *cbRow = rows, *crRow = rows + width;
    int lastChromaRow = -1;
    for (int row = 0; row < height; row++) {
        int chromaRow = row >> shiftV;
        if (chromaRow != lastChromaRow) {
            imago_heif_upsample_row(cbPlane + (size_t)chromaRow * cbStride, cbRow, width, shiftH);
            imago_heif_upsample_row(crPlane + (size_t)chromaRow * crStride, crRow, width, shiftH);
            lastChromaRow = chromaRow;
        }
        imago_heif_convert_row(yPlane + (size_t)row * yStride, cbRow, crRow, r + (size_t)row * rStride,
                               g + (size_t)row * gStride, b + (size_t)row * bStride, width, k);
    }
    free(rows);
    *out = image;
    return 1;
}

/// libde265's picture copied as YCbCr / monochrome, with the bitstream's nclx: what libheif's own plugin does.
static struct heif_error imago_heif_picture_to_ycbcr(const struct de265_image *picture,
                                                            struct heif_image **out) {
    int mono = de265_get_chroma_format(picture) == de265_chroma_mono;
    struct heif_image *image = NULL;
    struct heif_error error = heif_image_create(de265_get_image_width(picture, 0), de265_get_image_height(picture, 0),
                                                mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                                (enum heif_chroma)de265_get_chroma_format(picture), &image);
    if (error.code != heif_error_Ok) return error;
    const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    int bpp = de265_get_bits_per_pixel(picture, 0);
    for (int c = 0; c < (mono ? 1 : 3); c++) {
        int w = de265_get_image_width(picture, c), h = de265_get_image_height(picture, c), stride;
        if (de265_get_bits_per_pixel(picture, c) != bpp || w <= 0 || h <= 0) {
            heif_image_release(image);
            return imago_heif_failure(heif_suberror_Unsupported_color_conversion, "unsupported plane layout");
        }
        const uint8_t *in = de265_get_image_plane(picture, c, &stride);
        error = heif_image_add_plane(image, channels[c], w, h, bpp);
        if (error.code != heif_error_Ok || !in) {
            heif_image_release(image);
            return error.code != heif_error_Ok ? error : imago_heif_failure(heif_suberror_Unspecified, "no plane");
        }
        int outStride;
        uint8_t *to = heif_image_get_plane(image, channels[c], &outStride);
        size_t rowBytes = (size_t)w * (size_t)((bpp + 7) / 8);
        for (int row = 0; row < h; row++) memcpy(to + (size_t)row * outStride, in + (size_t)row * stride, rowBytes);
    }
    struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
    if (nclx) {
        heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)de265_get_image_colour_primaries(picture));
        heif_nclx_color_profile_set_transfer_characteristics(
            nclx, (uint16_t)de265_get_image_transfer_characteristics(picture));
        heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)de265_get_image_matrix_coefficients(picture));
        nclx->full_range_flag = (uint8_t)(de265_get_image_full_range_flag(picture) != 0);
        heif_image_set_nclx_color_profile(image, nclx);
        heif_nclx_color_profile_free(nclx);
    }
    *out = image;
    return imago_heif_ok();
}

static struct heif_error imago_heif_decode_image(void *decoder, struct heif_image **out) {
    imago_heif_de265 *d = (imago_heif_de265 *)decoder;
    *out = NULL;
    de265_flush_data(d->ctx);
    struct heif_error result = imago_heif_failure(heif_suberror_Unspecified, "libde265 produced no picture");
    int more;
    do {
        more = 0;
        if (de265_decode(d->ctx, &more) != DE265_OK) break;
        const struct de265_image *picture = de265_get_next_picture(d->ctx);
        if (!picture) continue;
        if (*out) {  // keep the last picture, as libheif's plugin does
            heif_image_release(*out);
            *out = NULL;
        }
        const imago_heif_job job = imago_heif_current_job;
        imago_heif_coefficients k;
        int matrix = job.hasNclx ? job.matrix : de265_get_image_matrix_coefficients(picture);
        int fullRange = job.hasNclx ? job.fullRange : de265_get_image_full_range_flag(picture);
        if (job.active && imago_heif_coefficients_for(matrix, fullRange, &k) &&
            imago_heif_picture_to_rgb(picture, &k, out)) {
            result = imago_heif_ok();
        } else {
            result = imago_heif_picture_to_ycbcr(picture, out);
        }
        de265_release_next_picture(d->ctx);
        if (result.code != heif_error_Ok) return result;
    } while (more);
    return result;
}

static void imago_heif_set_strict(void *decoder, int flag) {
    (void)decoder;
    (void)flag;
}

static const struct heif_decoder_plugin imago_heif_de265_plugin = {
    3,
    imago_heif_plugin_name,
    NULL,
    NULL,
    imago_heif_supports,
    imago_heif_new_decoder,
    imago_heif_free_decoder,
    imago_heif_push_data,
    imago_heif_decode_image,
    imago_heif_set_strict,
    "imago-libde265",
};

// ---------------------------------------------------------------------------------------------------------------
// AV1 refusal. libheif 1.15 hands AV1-coded items to its dav1d plugin, which sends dav1d an empty buffer for a
// malformed item and leaks 120 bytes inside libdav1d each time (RELIABILITY §16). AVIF goes through AVIFDecoder
// (libavif); in Imago's libheif contexts this plugin claims AV1 above every other plugin and refuses to decode,
// so libheif's AV1 plugins are never reached, whatever item libheif decides to decode.
// ---------------------------------------------------------------------------------------------------------------

static const char *imago_heif_av1_name(void) { return "Imago AV1 refusal (AVIF is decoded by libavif)"; }

static int imago_heif_av1_supports(enum heif_compression_format format) {
    return format == heif_compression_AV1 ? 1000 : 0;
}

static struct heif_error imago_heif_av1_new_decoder(void **decoder) {
    *decoder = NULL;
    return imago_heif_failure(heif_suberror_Unsupported_codec, IMAGO_HEIF_AV1_REFUSED);
}

static void imago_heif_av1_free_decoder(void *decoder) { (void)decoder; }

static struct heif_error imago_heif_av1_push_data(void *decoder, const void *data, size_t size) {
    (void)decoder;
    (void)data;
    (void)size;
    return imago_heif_failure(heif_suberror_Unsupported_codec, IMAGO_HEIF_AV1_REFUSED);
}

static struct heif_error imago_heif_av1_decode_image(void *decoder, struct heif_image **out) {
    (void)decoder;
    *out = NULL;
    return imago_heif_failure(heif_suberror_Unsupported_codec, IMAGO_HEIF_AV1_REFUSED);
}

static const struct heif_decoder_plugin imago_heif_av1_refusal_plugin = {
    3,
    imago_heif_av1_name,
    NULL,
    NULL,
    imago_heif_av1_supports,
    imago_heif_av1_new_decoder,
    imago_heif_av1_free_decoder,
    imago_heif_av1_push_data,
    imago_heif_av1_decode_image,
    imago_heif_set_strict,
    "imago-av1-refusal",
};

/// Registers Imago's HEVC plugin with `context` (it then wins over libheif's own libde265 plugin), and the AV1
/// refusal (libheif's dav1d plugin is then never used by this context).
struct heif_error imago_heif_register_plugin(struct heif_context *context) {
    struct heif_error error = heif_register_decoder(context, &imago_heif_av1_refusal_plugin);
    if (error.code != heif_error_Ok) return error;
    return heif_register_decoder(context, &imago_heif_de265_plugin);
}

/// RGB 4:4:4 planes → interleaved RGBA8 (alpha 255, or from `a` when not NULL), one row.
void imago_heif_interleave_row(const uint8_t *restrict r, const uint8_t *restrict g,
                                             const uint8_t *restrict b, const uint8_t *restrict a,
                                             uint8_t *restrict out, int width) {
    if (a) {
        for (int x = 0; x < width; x++) {
            out[4 * x] = r[x];
            out[4 * x + 1] = g[x];
            out[4 * x + 2] = b[x];
            out[4 * x + 3] = a[x];
        }
    } else {
        uint32_t *o = (uint32_t *)(void *)out;
        for (int x = 0; x < width; x++) {
            o[x] = (uint32_t)r[x] | ((uint32_t)g[x] << 8) | ((uint32_t)b[x] << 16) | 0xFF000000u;
        }
    }
}

/// Averages `k`×`k` blocks of RGB 4:4:4 planes into interleaved RGBA8 (alpha 255) of ceil(width/k) ×
/// ceil(height/k) pixels (edge blocks average the pixels they have): a thumbnail's first step, straight from
/// libheif's planes without a full-size RGBA copy. Returns 0 when out of memory.
int imago_heif_box_reduce(const uint8_t *r, int rStride, const uint8_t *g, int gStride,
                                        const uint8_t *b, int bStride, int width, int height, int k,
                                        uint8_t *out) {
    if (k < 1 || width < 1 || height < 1) return 0;
    int outWidth = (width + k - 1) / k, outHeight = (height + k - 1) / k;
    uint32_t *sums = (uint32_t *)malloc((size_t)outWidth * 3 * sizeof(uint32_t));
    if (!sums) return 0;
    for (int oy = 0; oy < outHeight; oy++) {
        memset(sums, 0, (size_t)outWidth * 3 * sizeof(uint32_t));
        int y0 = oy * k, y1 = y0 + k < height ? y0 + k : height;
        for (int y = y0; y < y1; y++) {
            const uint8_t *rr = r + (size_t)y * rStride, *gg = g + (size_t)y * gStride, *bb = b + (size_t)y * bStride;
            for (int ox = 0; ox < outWidth; ox++) {
                int x0 = ox * k, x1 = x0 + k < width ? x0 + k : width;
                uint32_t sr = 0, sg = 0, sb = 0;
                for (int x = x0; x < x1; x++) {
                    sr += rr[x];
                    sg += gg[x];
                    sb += bb[x];
                }
                sums[3 * ox] += sr;
                sums[3 * ox + 1] += sg;
                sums[3 * ox + 2] += sb;
            }
        }
        uint8_t *o = out + (size_t)oy * outWidth * 4;
        for (int ox = 0; ox < outWidth; ox++) {
            int x0 = ox * k, x1 = x0 + k < width ? x0 + k : width;
            uint32_t count = (uint32_t)((x1 - x0) * (y1 - y0));
            o[4 * ox] = (uint8_t)((sums[3 * ox] + count / 2) / count);
            o[4 * ox + 1] = (uint8_t)((sums[3 * ox + 1] + count / 2) / count);
            o[4 * ox + 2] = (uint8_t)((sums[3 * ox + 2] + count / 2) / count);
            o[4 * ox + 3] = 255;
        }
    }
    free(sums);
    return 1;
}
