// Strip-wise JPEG decode fused with the colour kernel: see include/CJPEGStrips.h. C because libjpeg reports
// errors by longjmp, which Swift cannot catch.
#include "CJPEGStrips.h"

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

/// libjpeg's error manager extended with the jump back into `cimago_jpeg_decode_converting` and a warning flag.
typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int warned;
} strip_errors;

static void strip_error_exit(j_common_ptr cinfo) {
    strip_errors *errors = (strip_errors *)cinfo->err;
    longjmp(errors->jump, 1);
}

static void strip_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0) ((strip_errors *)cinfo->err)->warned = 1;  // a warning (corrupt data); trace levels are >= 0
}

static void strip_output_message(j_common_ptr cinfo) { (void)cinfo; }

enum { strip_rows = 16 };

int cimago_jpeg_decode_converting(
    const uint8_t *data, size_t size, uint8_t *out, int width, int height, const cimago_color_tables *tables) {
    struct jpeg_decompress_struct cinfo;
    strip_errors errors;
    cinfo.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = strip_error_exit;
    errors.base.emit_message = strip_emit_message;
    errors.base.output_message = strip_output_message;
    errors.warned = 0;
    // Everything the jump returns to is set before setjmp and not changed after it (no volatile needed).
    if (setjmp(errors.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    int colour_space_fits = cinfo.jpeg_color_space == JCS_YCbCr || cinfo.jpeg_color_space == JCS_RGB
        || cinfo.jpeg_color_space == JCS_GRAYSCALE;
    if (cinfo.progressive_mode || !colour_space_fits || (int)cinfo.image_width != width
        || (int)cinfo.image_height != height || width <= 0 || height <= 0) {
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    // TurboJPEG's defaults for tjDecompress2 without flags: accurate integer IDCT, fancy upsampling.
    cinfo.out_color_space = JCS_EXT_RGBA;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&cinfo);
    size_t pitch = 4 * (size_t)width;
    JSAMPROW rows[strip_rows];
    // Strips of 16 rows (256 KB at 4,032 pixels, in L2): converting each call's one or two rows in L1 instead
    // measured slower (the kernel sets up its registers per call: ~1,500 calls for 12 MP instead of 189).
    while (cinfo.output_scanline < cinfo.output_height) {
        JDIMENSION first = cinfo.output_scanline;
        JDIMENSION count = cinfo.output_height - first < strip_rows ? cinfo.output_height - first : strip_rows;
        for (JDIMENSION i = 0; i < count; i++) rows[i] = out + (first + i) * pitch;
        JDIMENSION read = 0;
        while (read < count) {
            JDIMENSION got = jpeg_read_scanlines(&cinfo, rows + read, count - read);
            if (got == 0) break;  // suspension cannot happen with a memory source; be safe anyway
            read += got;
        }
        if (read < count || errors.warned) {
            jpeg_destroy_decompress(&cinfo);
            return errors.warned ? 2 : -1;
        }
        cimago_color_kernel_convert(tables, out + first * pitch, (size_t)count * (size_t)width);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return errors.warned ? 2 : 0;
}
