#ifndef CJPEGSTRIPS_H
#define CJPEGSTRIPS_H

#include <stddef.h>
#include <stdint.h>

#include "CColorKernel.h"

/// Decodes the baseline JPEG `data` (YCbCr, RGB or gray colour space) into RGBA8 rows at `out` (`width` × `height`,
/// tightly packed) with libjpeg's scanline API and converts each strip of 16 rows with the colour kernel's
/// `tables` right after libjpeg wrote it, while the strip is still in the L2 cache (TurboJPEG's one-call decode
/// leaves 48 MB for a 12 MP image that a separate pass reads back from memory).
///
/// Returns 0 when every row was decoded and converted. Any other result leaves `out` partly written and means
/// "decode it the usual way": 1 when the file is not for this path (progressive, CMYK/YCCK, another size),
/// 2 when libjpeg warned (corrupt or truncated data: TurboJPEG's path decides what that means), -1 on a libjpeg
/// error. libjpeg errors are caught with setjmp/longjmp inside this function; nothing escapes to the caller.
int cimago_jpeg_decode_converting(
    const uint8_t *data, size_t size, uint8_t *out, int width, int height, const cimago_color_tables *tables);

#endif
