#ifndef CIMAGO_PNG_SHRINK_H
#define CIMAGO_PNG_SHRINK_H

#include <stddef.h>
#include <stdint.h>

/// Reads a PNG row by row with libpng's full read API and writes it shrunk by `factor` (1 to 256) in each
/// direction, so that a thumbnail of a large PNG never holds the full image: each output pixel is the mean of the
/// `factor` × `factor` block of source pixels it covers (fewer at the right and bottom edges, where the output
/// size rounds up), colour weighted by alpha. `channels` is 1 for gray (an opaque gray file: no alpha channel and
/// no tRNS) or 4 for RGBA with straight alpha (everything else; 255 where the file has no alpha). The samples
/// are those libpng's simplified API gives for the same file: palettes and tRNS expanded, gray of 1, 2 or 4 bits
/// scaled to 8, 16-bit samples rounded to 8, no gamma conversion (libpng's full API converts none unless told).
///
/// `out` holds `out_size` bytes: ceil(width / factor) × ceil(height / factor) × `channels`. The memory taken is one
/// source row and one row of sums, whatever the image's height; an Adam7-interlaced file, whose passes each cover
/// the whole image, adds 32-bit sums for the whole output (4 × `out_size` bytes), still never the full image. Its
/// output is the same, byte for byte, as that of the same image not interlaced.
///
/// Returns 0 on success; 1 without writing anything when the file is one this reader leaves to the simplified API
/// (a layout that does not match `channels`, an `out_size` that does not match);
/// -1 when libpng fails (corrupt or truncated data), with its message in `message` (NUL-terminated, at most
/// `message_size` bytes). libpng's errors are caught with setjmp/longjmp inside this function.
int cimago_png_read_shrunk(
    const uint8_t *data, size_t size, uint32_t factor, int channels, uint8_t *out, size_t out_size, char *message,
    size_t message_size);

#endif
