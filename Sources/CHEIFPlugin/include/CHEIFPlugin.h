#ifndef CHEIFPLUGIN_H
#define CHEIFPLUGIN_H

#include <libheif/heif.h>
#include <stdint.h>

// Imago's HEVC decoder plugin for libheif 1.15, registered per context (heif_register_decoder), over FFmpeg's
// libavcodec (the CAVCodec module's headers; the library is loaded with dlopen on first use, and without it the
// plugin declines HEVC so that libheif's own libde265 plugin decodes).
//
// Why: libheif 1.15's decode_image_planar converts every decoded HEVC image to planar RGB 4:4:4 with a scalar
// float loop (after one more full copy of the YCbCr planes), whatever output was asked for; its libde265 plugin
// decodes on a worker thread; and libde265 1.0.11 costs ~1.45× the CPU of libavcodec 5.1 on the same bitstream.
// This plugin decodes with libavcodec on the calling thread, and for 8-bit 4:2:0 / 4:2:2 / 4:4:4 with a matrix
// it knows converts the decoded planes straight to the RGB 4:4:4 planes libheif wants (integer fixed point, in a
// loop the compiler vectorises). libheif then has nothing left to convert when asked for RGB 4:4:4; grids and
// transforms work on those planes as before. Anything else is handed back as YCbCr, exactly as libheif's own
// plugin does, and libheif converts it.
//
// The matrix is that of the item's `colr` nclx when it has one (libheif overrides the bitstream's with it), else
// the bitstream's VUI: the caller sets it for the calling thread (imago_heif_job_begin) before heif_decode_image,
// with the context's decoding threads at 0 so that every tile is decoded on this thread. Without a job (another
// thread) the plugin hands back YCbCr. The pixel limit (imago_heif_set_pixel_limit) bounds the picture an SPS
// may declare, checked before libavcodec sizes anything from it.

/// Sets the colour description for the next decodes on this thread (the item's `colr` nclx, if any).
void imago_heif_job_begin(int hasNclx, int matrix, int fullRange);

/// Clears this thread's job.
void imago_heif_job_end(void);

/// The largest picture (width × height) the plugin decodes on this thread, from an SPS or as libavcodec's
/// max_pixels; 0 = the default, 100,000,000 (DecodingOptions' default pixel limit).
void imago_heif_set_pixel_limit(int64_t pixels);

/// The message of the error Imago's AV1 refusal plugin returns for an AV1-coded item.
#define IMAGO_HEIF_AV1_REFUSED "AV1-coded item: AVIF is decoded by AVIFDecoder (libavif), not libheif"

/// Registers Imago's HEVC plugin with `context` (it then wins over libheif's own libde265 plugin), and a plugin
/// that claims AV1 above libheif's dav1d/aom plugins and refuses it (dav1d leaked inside libheif, RELIABILITY §16).
struct heif_error imago_heif_register_plugin(struct heif_context *context);

/// RGB 4:4:4 planes → interleaved RGBA8 (alpha 255, or from `a` when not NULL), one row.
void imago_heif_interleave_row(const uint8_t *r, const uint8_t *g, const uint8_t *b, const uint8_t *a,
                               uint8_t *out, int width);

/// Averages `k`×`k` blocks of RGB 4:4:4 planes into interleaved RGBA8 (alpha 255) of ceil(width/k) ×
/// ceil(height/k) pixels (edge blocks average the pixels they have): a thumbnail's first step, straight from
/// libheif's planes without a full-size RGBA copy. `k` ≤ 4096. Returns 0 when out of memory.
int imago_heif_box_reduce(const uint8_t *r, int rStride, const uint8_t *g, int gStride, const uint8_t *b,
                          int bStride, int width, int height, int k, uint8_t *out);

#endif
