#ifndef CIMAGO_PNG_WRITE_H
#define CIMAGO_PNG_WRITE_H

#include <stddef.h>
#include <stdint.h>

/// The colour types `cimago_png_write_interlaced` writes (PNG's own numbers).
enum {
    cimago_png_writer_gray = 0,
    cimago_png_writer_rgb = 2,
    cimago_png_writer_palette = 3,
    cimago_png_writer_rgba = 6,
};

/// Writes an 8-bit, Adam7-interlaced PNG with libpng's full write API (the simplified API cannot interlace):
/// `height` rows of `row_bytes` bytes at `pixels` in `color_type`'s layout (1, 3, 4 bytes a pixel; 1 index a
/// pixel for a palette), `palette_entries` RGBA entries at `palette` for a palette (PLTE, and tRNS up to the last
/// entry that is not opaque), an `sRGB` chunk (perceptual), as the simplified API writes, and zlib's default level.
///
/// On success returns 0 and `*out` holds `*out_size` bytes the caller releases with `free`. The output may not
/// grow past `max_size` bytes: a larger one is an error, so every allocation is bounded before it is made.
/// On failure returns -1, `*out` is NULL and `message` holds libpng's message (NUL-terminated, at most
/// `message_size` bytes). libpng errors are caught with setjmp/longjmp inside this function.
int cimago_png_write_interlaced(
    const uint8_t *pixels, size_t row_bytes, uint32_t width, uint32_t height, int color_type,
    const uint8_t *palette, int palette_entries, size_t max_size, uint8_t **out, size_t *out_size,
    char *message, size_t message_size);

#endif
