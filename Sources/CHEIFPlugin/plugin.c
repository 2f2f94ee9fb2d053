// Imago's HEVC decoder plugin for libheif 1.15 (see include/CHEIFPlugin.h for why), over FFmpeg's libavcodec.
#include "CHEIFPlugin.h"

#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
#include <dlfcn.h>
#include <libheif/heif_plugin.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------------------------
// Imago's HEVC decoder plugin for libheif 1.15 (registered per context with heif_register_decoder).
//
// Why: libheif 1.15's decode_image_planar converts every decoded HEVC image to planar RGB 4:4:4 with a scalar
// float loop (one more full copy of the YCbCr planes first), whatever output was asked for; its libde265 plugin
// decodes on a worker thread; and libde265 1.0.11 itself takes ~1.45× the CPU of FFmpeg 5.1's HEVC decoder on the
// same bitstream, single-threaded (BENCHMARKS.md, "HEIC through libavcodec"). This plugin decodes with libavcodec
// on the calling thread (thread_count 1), and for 8-bit 4:2:0 / 4:2:2 / 4:4:4 with a matrix it knows converts the
// decoded planes straight to the RGB 4:4:4 planes libheif wants (integer fixed point, a loop the compiler
// vectorises). libheif then has nothing left to convert when asked for RGB 4:4:4; grids and transforms work on
// those planes as before. Anything else (10/12-bit, monochrome, other matrices, a decode without a job) is handed
// back as YCbCr exactly as libheif's own libde265 plugin does, and libheif converts it. libheif's own libde265
// plugin stays registered below this one.
//
// The matrix is that of the item's `colr` nclx when it has one (libheif overrides the bitstream's with it), else
// the bitstream's VUI: the Swift side sets it for the calling thread (imago_heif_job_begin) before
// heif_decode_image, with the context's decoding threads at 0 so that every tile is decoded on this thread.
// Without a job (another thread) the plugin hands back YCbCr.
//
// Bounds: libavcodec allocates its picture from the SPS's size, which may differ from the item's `ispe` that the
// Swift side checked: an SPS over the calling thread's pixel limit (imago_heif_set_pixel_limit; 100 M without
// one) is refused before libavcodec sees it, and its max_pixels is that limit with room for its stride rounding. NAL
// lengths are checked against the pushed size; plane sizes from the decoded frame are checked before reading.
// ---------------------------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------------------------
// libavcodec is loaded on first use (dlopen), not linked: Debian's libavcodec59 pulls in ~70 more shared libraries
// (its other codecs' dependencies), which added 12 MB to the RSS of every process linking Imago (`imago --help`:
// 34 → 46 MB) and broke the 80 MB budget of `imago decode` on a 300-frame WebP. Loaded, it costs only HEIC decodes.
// Without libavcodec (not installed, other soname), the plugin declines HEVC and libheif's own libde265 plugin
// decodes, as before.
// ---------------------------------------------------------------------------------------------------------------

typedef struct {
    const AVCodec *(*find_decoder)(enum AVCodecID);
    AVCodecContext *(*alloc_context3)(const AVCodec *);
    int (*open2)(AVCodecContext *, const AVCodec *, AVDictionary **);
    void (*free_context)(AVCodecContext **);
    int (*send_packet)(AVCodecContext *, const AVPacket *);
    int (*receive_frame)(AVCodecContext *, AVFrame *);
    AVPacket *(*packet_alloc)(void);
    void (*packet_free)(AVPacket **);
    AVFrame *(*frame_alloc)(void);
    void (*frame_free)(AVFrame **);
    void (*frame_unref)(AVFrame *);
    void (*frame_move_ref)(AVFrame *, AVFrame *);
    const AVPixFmtDescriptor *(*pix_fmt_desc_get)(enum AVPixelFormat);
} imago_heif_avcodec_api;

static imago_heif_avcodec_api imago_av;
static int imago_av_loaded;
static pthread_once_t imago_av_once = PTHREAD_ONCE_INIT;

static int imago_heif_symbol(void *library, const char *name, void *slot) {
    void *symbol = library ? dlsym(library, name) : NULL;
    memcpy(slot, &symbol, sizeof symbol);
    return symbol != NULL;
}

static void imago_heif_load_avcodec(void) {
    // The sonames of the headers built against (libavcodec 59 and libavutil 57 in FFmpeg 5.1).
    void *codec = dlopen("libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
    void *util = dlopen("libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
    imago_heif_avcodec_api api;
    int ok = imago_heif_symbol(codec, "avcodec_find_decoder", &api.find_decoder) &&
             imago_heif_symbol(codec, "avcodec_alloc_context3", &api.alloc_context3) &&
             imago_heif_symbol(codec, "avcodec_open2", &api.open2) &&
             imago_heif_symbol(codec, "avcodec_free_context", &api.free_context) &&
             imago_heif_symbol(codec, "avcodec_send_packet", &api.send_packet) &&
             imago_heif_symbol(codec, "avcodec_receive_frame", &api.receive_frame) &&
             imago_heif_symbol(codec, "av_packet_alloc", &api.packet_alloc) &&
             imago_heif_symbol(codec, "av_packet_free", &api.packet_free) &&
             imago_heif_symbol(util, "av_frame_alloc", &api.frame_alloc) &&
             imago_heif_symbol(util, "av_frame_free", &api.frame_free) &&
             imago_heif_symbol(util, "av_frame_unref", &api.frame_unref) &&
             imago_heif_symbol(util, "av_frame_move_ref", &api.frame_move_ref) &&
             imago_heif_symbol(util, "av_pix_fmt_desc_get", &api.pix_fmt_desc_get);
    if (ok && api.find_decoder(AV_CODEC_ID_HEVC)) {
        imago_av = api;
        imago_av_loaded = 1;
    }
}

/// Whether libavcodec (with an HEVC decoder) is loaded; loads it on the first call.
static int imago_heif_avcodec_available(void) {
    pthread_once(&imago_av_once, imago_heif_load_avcodec);
    return imago_av_loaded;
}

/// The colour description the plugin converts with, for the decode running on this thread.
typedef struct {
    int active;
    int hasNclx;
    int matrix;
    int fullRange;
} imago_heif_job;

static _Thread_local imago_heif_job imago_heif_current_job;
static _Thread_local int64_t imago_heif_current_pixel_limit;

/// Sets the colour description for the next decodes on this thread (the item's `colr` nclx, if any).
void imago_heif_job_begin(int hasNclx, int matrix, int fullRange) {
    imago_heif_current_job.active = 1;
    imago_heif_current_job.hasNclx = hasNclx;
    imago_heif_current_job.matrix = matrix;
    imago_heif_current_job.fullRange = fullRange;
}

/// Clears this thread's job.
void imago_heif_job_end(void) { memset(&imago_heif_current_job, 0, sizeof imago_heif_current_job); }

/// The largest picture (width × height) the plugin decodes on this thread; 0 = the default, 100,000,000.
void imago_heif_set_pixel_limit(int64_t pixels) { imago_heif_current_pixel_limit = pixels > 0 ? pixels : 0; }

/// The Annex B bitstream of one image (start codes in place of libheif's 4-byte NAL lengths), with libavcodec's
/// zeroed input padding after it.
typedef struct {
    uint8_t *bytes;
    size_t count;
    size_t capacity;
    int64_t largestSPSPixels;  // the largest picture an SPS in the stream declares
} imago_heif_hevc;

/// Reads an HEVC RBSP bit by bit, skipping emulation-prevention bytes (00 00 03); reads past the end give 0s
/// and set `overrun`.
typedef struct {
    const uint8_t *bytes;
    size_t count, at;
    int bit, zeros, overrun;
    uint8_t current;
} imago_heif_bits;

static int imago_heif_bit(imago_heif_bits *b) {
    if (b->bit == 0) {
        if (b->at >= b->count) {
            b->overrun = 1;
            return 0;
        }
        uint8_t byte = b->bytes[b->at++];
        if (b->zeros >= 2 && byte == 3) {  // emulation prevention
            b->zeros = 0;
            if (b->at >= b->count) {
                b->overrun = 1;
                return 0;
            }
            byte = b->bytes[b->at++];
        }
        b->zeros = byte == 0 ? b->zeros + 1 : 0;
        b->current = byte;
        b->bit = 8;
    }
    b->bit--;
    return (b->current >> b->bit) & 1;
}

static uint32_t imago_heif_bits_read(imago_heif_bits *b, int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 1) | (uint32_t)imago_heif_bit(b);
    return v;
}

/// ue(v); more than 31 leading zeros marks the reader overrun.
static uint32_t imago_heif_bits_ue(imago_heif_bits *b) {
    int zeros = 0;
    while (!imago_heif_bit(b)) {
        if (b->overrun || ++zeros > 31) {
            b->overrun = 1;
            return 0;
        }
    }
    return zeros == 0 ? 0 : ((1u << zeros) - 1) + imago_heif_bits_read(b, zeros);
}

/// The picture size (pic_width × pic_height_in_luma_samples) an SPS NAL unit declares, -1 when unreadable.
/// libavcodec sizes its per-block tables from these before it asks for the picture (where max_pixels is
/// checked), so the plugin checks them first.
static int64_t imago_heif_sps_pixels(const uint8_t *nal, size_t length) {
    if (length < 3) return -1;
    imago_heif_bits b = {nal + 2, length - 2, 0, 0, 0, 0, 0};  // after the 2-byte NAL header
    imago_heif_bits_read(&b, 4);                              // sps_video_parameter_set_id
    int subLayers = (int)imago_heif_bits_read(&b, 3);         // sps_max_sub_layers_minus1
    imago_heif_bits_read(&b, 1);                              // sps_temporal_id_nesting_flag
    imago_heif_bits_read(&b, 32);                             // general profile: space, tier, idc, 32 flags …
    imago_heif_bits_read(&b, 32);
    imago_heif_bits_read(&b, 32);                             // … 4 source flags and 44 reserved bits: 96 in all
    int profilePresent[8] = {0}, levelPresent[8] = {0};
    for (int i = 0; i < subLayers; i++) {
        profilePresent[i] = imago_heif_bit(&b);
        levelPresent[i] = imago_heif_bit(&b);
    }
    if (subLayers > 0) imago_heif_bits_read(&b, 2 * (8 - subLayers));
    for (int i = 0; i < subLayers; i++) {
        if (profilePresent[i]) {
            imago_heif_bits_read(&b, 32);
            imago_heif_bits_read(&b, 32);
            imago_heif_bits_read(&b, 24);
        }
        if (levelPresent[i]) imago_heif_bits_read(&b, 8);
    }
    imago_heif_bits_ue(&b);  // sps_seq_parameter_set_id
    if (imago_heif_bits_ue(&b) == 3) imago_heif_bits_read(&b, 1);  // chroma_format_idc; separate_colour_plane_flag
    int64_t width = imago_heif_bits_ue(&b), height = imago_heif_bits_ue(&b);
    return b.overrun ? -1 : width * height;
}

static const char *imago_heif_plugin_name(void) { return "Imago libavcodec HEVC (calling thread, direct RGB)"; }

static int imago_heif_supports(enum heif_compression_format format) {
    return format == heif_compression_HEVC && imago_heif_avcodec_available() ? 200 : 0;
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
    imago_heif_hevc *d = (imago_heif_hevc *)calloc(1, sizeof(imago_heif_hevc));
    if (!d) return imago_heif_failure(heif_suberror_Unspecified, "out of memory");
    *decoder = d;
    return imago_heif_ok();
}

static void imago_heif_free_decoder(void *decoder) {
    imago_heif_hevc *d = (imago_heif_hevc *)decoder;
    if (!d) return;
    free(d->bytes);
    free(d);
}

/// libheif hands over the hvcC parameter sets and the item's data as 4-byte-length-prefixed NAL units; each
/// becomes a 4-byte start code and the unit (the same size, so the stream grows by exactly `size`).
static struct heif_error imago_heif_push_data(void *decoder, const void *data, size_t size) {
    imago_heif_hevc *d = (imago_heif_hevc *)decoder;
    const uint8_t *bytes = (const uint8_t *)data;
    const size_t padding = AV_INPUT_BUFFER_PADDING_SIZE;
    if (size > (size_t)INT_MAX - padding || d->count > (size_t)INT_MAX - padding - size) {
        return imago_heif_failure(heif_suberror_Unspecified, "HEVC data larger than 2 GB");
    }
    size_t needed = d->count + size + padding;
    if (needed > d->capacity) {
        size_t capacity = d->capacity * 2 > needed ? d->capacity * 2 : needed;
        uint8_t *grown = (uint8_t *)realloc(d->bytes, capacity);
        if (!grown) return imago_heif_failure(heif_suberror_Unspecified, "out of memory");
        d->bytes = grown;
        d->capacity = capacity;
    }
    size_t at = 0;
    while (at < size) {
        if (size - at < 4) return imago_heif_failure(heif_suberror_End_of_data, "truncated NAL length");
        uint32_t length = ((uint32_t)bytes[at] << 24) | ((uint32_t)bytes[at + 1] << 16) |
                          ((uint32_t)bytes[at + 2] << 8) | (uint32_t)bytes[at + 3];
        at += 4;
        if (length > size - at) return imago_heif_failure(heif_suberror_End_of_data, "truncated NAL unit");
        if (length >= 2 && ((bytes[at] >> 1) & 0x3F) == 33) {  // SPS
            int64_t pixels = imago_heif_sps_pixels(bytes + at, length);
            if (pixels > d->largestSPSPixels) d->largestSPSPixels = pixels;
        }
        uint8_t *to = d->bytes + d->count;
        to[0] = 0;
        to[1] = 0;
        to[2] = 0;
        to[3] = 1;
        memcpy(to + 4, bytes + at, length);
        d->count += 4 + (size_t)length;
        at += length;
    }
    memset(d->bytes + d->count, 0, padding);
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

/// A decoded frame's layout: planar YCbCr (or grey) of one bit depth, little-endian, without alpha.
typedef struct {
    int components;  // 1 (monochrome) or 3
    int depth;       // bits per sample, 8 to 16
    int bytes;       // bytes per sample, 1 or 2
    int shiftH, shiftV;
    enum heif_chroma chroma;
} imago_heif_layout;

/// The layout of `frame`, 0 when it is none this plugin hands to libheif (packed, RGB, alpha, big-endian,
/// palette, hardware, or a chroma subsampling HEIF does not have); every plane's pointer and stride checked.
static int imago_heif_layout_of(const AVFrame *frame, imago_heif_layout *out) {
    const AVPixFmtDescriptor *desc = imago_av.pix_fmt_desc_get((enum AVPixelFormat)frame->format);
    if (!desc || frame->width <= 0 || frame->height <= 0) return 0;
    const uint64_t refused = AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM |
                             AV_PIX_FMT_FLAG_BE | AV_PIX_FMT_FLAG_ALPHA | AV_PIX_FMT_FLAG_HWACCEL;
    if (desc->flags & refused) return 0;
    int components = desc->nb_components;
    if (components != 1 && !(components == 3 && (desc->flags & AV_PIX_FMT_FLAG_PLANAR))) return 0;
    int depth = desc->comp[0].depth, bytes = depth > 8 ? 2 : 1;
    for (int c = 0; c < components; c++) {
        if (desc->comp[c].depth != depth || desc->comp[c].plane != c || desc->comp[c].step != bytes ||
            desc->comp[c].offset != 0 || desc->comp[c].shift != 0)
            return 0;
    }
    if (depth < 8 || depth > 16) return 0;
    int shiftH = components == 1 ? 0 : desc->log2_chroma_w, shiftV = components == 1 ? 0 : desc->log2_chroma_h;
    enum heif_chroma chroma;
    if (components == 1) chroma = heif_chroma_monochrome;
    else if (shiftH == 1 && shiftV == 1) chroma = heif_chroma_420;
    else if (shiftH == 1 && shiftV == 0) chroma = heif_chroma_422;
    else if (shiftH == 0 && shiftV == 0) chroma = heif_chroma_444;
    else return 0;
    for (int c = 0; c < components; c++) {
        int w = c == 0 ? frame->width : (frame->width + (1 << shiftH) - 1) >> shiftH;
        if (!frame->data[c] || frame->linesize[c] < w * bytes) return 0;
    }
    out->components = components;
    out->depth = depth;
    out->bytes = bytes;
    out->shiftH = shiftH;
    out->shiftV = shiftV;
    out->chroma = chroma;
    return 1;
}

/// An 8-bit 4:2:0 / 4:2:2 / 4:4:4 frame straight to a new RGB 4:4:4 heif_image; 0 when this path does not
/// take it.
static int imago_heif_frame_to_rgb(const AVFrame *frame, const imago_heif_layout *layout,
                                   const imago_heif_coefficients *k, struct heif_image **out) {
    if (layout->components != 3 || layout->depth != 8) return 0;
    int width = frame->width, height = frame->height, shiftH = layout->shiftH, shiftV = layout->shiftV;
    const uint8_t *yPlane = frame->data[0], *cbPlane = frame->data[1], *crPlane = frame->data[2];
    int yStride = frame->linesize[0], cbStride = frame->linesize[1], crStride = frame->linesize[2];

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
            imago_heif_upsample_row(cbPlane + (ptrdiff_t)chromaRow * cbStride, cbRow, width, shiftH);
            imago_heif_upsample_row(crPlane + (ptrdiff_t)chromaRow * crStride, crRow, width, shiftH);
            lastChromaRow = chromaRow;
        }
        imago_heif_convert_row(yPlane + (ptrdiff_t)row * yStride, cbRow, crRow, r + (size_t)row * rStride,
                               g + (size_t)row * gStride, b + (size_t)row * bStride, width, k);
    }
    free(rows);
    *out = image;
    return 1;
}

/// A frame copied as YCbCr / monochrome, with the bitstream's nclx: what libheif's own libde265 plugin hands
/// over (samples deeper than 8 bits as 16-bit little-endian words, as libde265 gives them).
static struct heif_error imago_heif_frame_to_ycbcr(const AVFrame *frame, const imago_heif_layout *layout,
                                                   struct heif_image **out) {
    int mono = layout->components == 1;
    struct heif_image *image = NULL;
    struct heif_error error = heif_image_create(frame->width, frame->height,
                                                mono ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                                layout->chroma, &image);
    if (error.code != heif_error_Ok) return error;
    const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    for (int c = 0; c < layout->components; c++) {
        int w = c == 0 ? frame->width : (frame->width + (1 << layout->shiftH) - 1) >> layout->shiftH;
        int h = c == 0 ? frame->height : (frame->height + (1 << layout->shiftV) - 1) >> layout->shiftV;
        error = heif_image_add_plane(image, channels[c], w, h, layout->depth);
        if (error.code != heif_error_Ok) {
            heif_image_release(image);
            return error;
        }
        int outStride;
        uint8_t *to = heif_image_get_plane(image, channels[c], &outStride);
        size_t rowBytes = (size_t)w * (size_t)layout->bytes;
        if (!to || (size_t)outStride < rowBytes) {
            heif_image_release(image);
            return imago_heif_failure(heif_suberror_Unspecified, "libheif gave no plane");
        }
        for (int row = 0; row < h; row++) {
            memcpy(to + (size_t)row * outStride, frame->data[c] + (ptrdiff_t)row * frame->linesize[c], rowBytes);
        }
    }
    struct heif_color_profile_nclx *nclx = heif_nclx_color_profile_alloc();
    if (nclx) {
        heif_nclx_color_profile_set_color_primaries(nclx, (uint16_t)frame->color_primaries);
        heif_nclx_color_profile_set_transfer_characteristics(nclx, (uint16_t)frame->color_trc);
        heif_nclx_color_profile_set_matrix_coefficients(nclx, (uint16_t)frame->colorspace);
        nclx->full_range_flag = (uint8_t)(frame->color_range == AVCOL_RANGE_JPEG);
        heif_image_set_nclx_color_profile(image, nclx);
        heif_nclx_color_profile_free(nclx);
    }
    *out = image;
    return imago_heif_ok();
}

/// `frame` handed to libheif: RGB 4:4:4 when the calling thread has a job and the layout and matrix allow,
/// else YCbCr.
static struct heif_error imago_heif_hand_over(const AVFrame *frame, struct heif_image **out) {
    imago_heif_layout layout;
    if (!imago_heif_layout_of(frame, &layout)) {
        return imago_heif_failure(heif_suberror_Unsupported_color_conversion, "unsupported HEVC picture layout");
    }
    const imago_heif_job job = imago_heif_current_job;
    imago_heif_coefficients k;
    int matrix = job.hasNclx ? job.matrix : (int)frame->colorspace;
    int fullRange = job.hasNclx ? job.fullRange : frame->color_range == AVCOL_RANGE_JPEG;
    if (job.active && imago_heif_coefficients_for(matrix, fullRange, &k) &&
        imago_heif_frame_to_rgb(frame, &layout, &k, out)) {
        return imago_heif_ok();
    }
    return imago_heif_frame_to_ycbcr(frame, &layout, out);
}

/// Decodes the pushed stream with a fresh single-threaded libavcodec HEVC decoder and hands over its last
/// picture (as libheif's own plugin keeps the last one).
static struct heif_error imago_heif_decode_image(void *decoder, struct heif_image **out) {
    imago_heif_hevc *d = (imago_heif_hevc *)decoder;
    *out = NULL;
    if (!d->bytes || d->count == 0) return imago_heif_failure(heif_suberror_End_of_data, "no HEVC data");
    const AVCodec *codec = imago_av.find_decoder(AV_CODEC_ID_HEVC);
    if (!codec) return imago_heif_failure(heif_suberror_Unsupported_codec, "libavcodec has no HEVC decoder");
    AVCodecContext *context = imago_av.alloc_context3(codec);
    AVPacket *packet = imago_av.packet_alloc();
    AVFrame *frame = imago_av.frame_alloc(), *last = imago_av.frame_alloc();
    struct heif_error result = imago_heif_failure(heif_suberror_Unspecified, "out of memory");
    if (!context || !packet || !frame || !last) goto done;
    context->thread_count = 1;  // decode on the calling thread (CPU time is what is compared)
    context->thread_type = 0;
    // libavcodec allocates its picture from the SPS: refuse one larger than the caller's pixel limit first.
    int64_t limit = imago_heif_current_pixel_limit > 0 ? imago_heif_current_pixel_limit : 100000000;
    result = imago_heif_failure(heif_suberror_Security_limit_exceeded, "the HEVC SPS declares more pixels than allowed");
    if (d->largestSPSPixels > limit) goto done;
    // libavcodec checks its own buffer against max_pixels with the width rounded up to its stride alignment (64),
    // so an image just under the limit (1025 x 900, checked exactly above and by the Swift side) was refused as
    // "no picture"; an eighth and 64 K pixels more cover that rounding for every width over 504.
    context->max_pixels = limit + limit / 8 + 65536;
    // Hostile input must not write to the host's stderr: this context's messages (levels 8…56) move to 198…246, above
    // any log level (av_log keeps the low 8 bits of a level, so the offset must keep them under 256).
    context->log_level_offset = 190;
    result = imago_heif_failure(heif_suberror_Unspecified, "libavcodec could not open its HEVC decoder");
    if (imago_av.open2(context, codec, NULL) < 0) goto done;
    packet->data = d->bytes;
    packet->size = (int)d->count;  // ≤ INT_MAX − padding, checked in push_data
    result = imago_heif_failure(heif_suberror_Unspecified, "libavcodec produced no picture");
    int sent = imago_av.send_packet(context, packet);
    if (sent < 0 && sent != AVERROR(EAGAIN)) goto done;
    imago_av.send_packet(context, NULL);  // flush: the picture of a single-image stream comes out now
    int have = 0;
    while (imago_av.receive_frame(context, frame) == 0) {
        imago_av.frame_unref(last);
        imago_av.frame_move_ref(last, frame);
        have = 1;
    }
    if (have) {
        // Lower the peak before the conversion allocates its RGB planes: the decoder's tables and the stream copy
        // go now (the frame holds its own reference to its buffers).
        imago_av.free_context(&context);
        free(d->bytes);
        d->bytes = NULL;
        d->count = d->capacity = 0;
        result = imago_heif_hand_over(last, out);
    }
done:
    imago_av.frame_free(&last);
    imago_av.frame_free(&frame);
    imago_av.packet_free(&packet);
    imago_av.free_context(&context);
    return result;
}

static void imago_heif_set_strict(void *decoder, int flag) {
    (void)decoder;
    (void)flag;
}

static const struct heif_decoder_plugin imago_heif_avcodec_plugin = {
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
    "imago-libavcodec-hevc",
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
    return heif_register_decoder(context, &imago_heif_avcodec_plugin);
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
