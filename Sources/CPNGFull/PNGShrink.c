// Row-by-row PNG reads shrunk while reading: see include/PNGShrink.h. C because libpng reports errors by longjmp,
// which Swift cannot catch.
#include "PNGShrink.h"
#include "PNGMessage.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

/// The bytes libpng reads from, and where an error's message is kept for the caller.
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    char *message;
    size_t message_size;
} shrink_state;

static void shrink_error(png_structp png, png_const_charp text) {
    shrink_state *state = (shrink_state *)png_get_error_ptr(png);
    cimago_png_note(state->message, state->message_size, text);
    png_longjmp(png, 1);
}

static void shrink_warning(png_structp png, png_const_charp text) { (void)png, (void)text; }

static void shrink_read(png_structp png, png_bytep into, size_t length) {
    shrink_state *state = (shrink_state *)png_get_io_ptr(png);
    if (length > state->size - state->offset) png_error(png, "Read Error: file truncated");
    memcpy(into, state->data + state->offset, length);
    state->offset += length;
}

/// Writes the output row of `sums` (`rows` source rows of `factor`-pixel blocks added up): means of gray, or of
/// opaque RGBA's colour (`is_opaque`: colour not weighted), or RGBA with colour divided by the alpha it was
/// weighted by.
static void shrink_emit(
    const uint64_t *sums, const uint32_t *columns, uint32_t out_width, uint32_t rows, int channels, int is_opaque,
    uint8_t *out) {
    for (uint32_t x = 0; x < out_width; x++) {
        uint64_t n = (uint64_t)columns[x] * rows;
        if (channels == 1) {
            out[x] = (uint8_t)((sums[x] + n / 2) / n);
            continue;
        }
        const uint64_t *s = sums + 4 * (size_t)x;
        uint8_t *o = out + 4 * (size_t)x;
        if (is_opaque) {
            o[0] = (uint8_t)((s[0] + n / 2) / n);
            o[1] = (uint8_t)((s[1] + n / 2) / n);
            o[2] = (uint8_t)((s[2] + n / 2) / n);
            o[3] = 255;
            continue;
        }
        uint64_t alpha = s[3];
        if (alpha == 0) {
            o[0] = o[1] = o[2] = o[3] = 0;
            continue;
        }
        for (int c = 0; c < 3; c++) {
            uint64_t value = (s[c] + alpha / 2) / alpha;
            o[c] = (uint8_t)(value > 255 ? 255 : value);
        }
        o[3] = (uint8_t)((alpha + n / 2) / n);
    }
}

/// Adds one source row to `sums`: each block of `columns[x]` pixels summed in 32 bits (at most 256 pixels of
/// 255 × 255), then into the 64-bit sums.
static void shrink_accumulate(
    const uint8_t *row, const uint32_t *columns, uint32_t out_width, int channels, int is_opaque, uint64_t *sums) {
    const uint8_t *p = row;
    for (uint32_t x = 0; x < out_width; x++) {
        uint32_t count = columns[x];
        if (channels == 1) {
            uint32_t sum = 0;
            for (uint32_t i = 0; i < count; i++) sum += p[i];
            sums[x] += sum;
            p += count;
            continue;
        }
        uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        if (is_opaque) {
            for (uint32_t i = 0; i < count; i++, p += 4) {
                s0 += p[0];
                s1 += p[1];
                s2 += p[2];
            }
        } else {
            for (uint32_t i = 0; i < count; i++, p += 4) {
                uint32_t a = p[3];
                s0 += p[0] * a;
                s1 += p[1] * a;
                s2 += p[2] * a;
                s3 += a;
            }
        }
        uint64_t *s = sums + 4 * (size_t)x;
        s[0] += s0;
        s[1] += s1;
        s[2] += s2;
        s[3] += s3;
    }
}

/// Reads the rows of a file that is not interlaced, top to bottom, writing each output row once its `factor` rows
/// (fewer at the bottom) are summed: one row of 64-bit sums, whatever the image's height.
static void shrink_sequential(
    png_structp png, uint32_t height, uint32_t factor, int channels, int is_opaque, const uint32_t *columns,
    uint32_t out_width, uint8_t *row, uint64_t *sums, uint8_t *out) {
    uint32_t rows = 0;
    uint32_t y_out = 0;
    for (uint32_t y = 0; y < height; y++) {
        png_read_row(png, row, NULL);
        shrink_accumulate(row, columns, out_width, channels, is_opaque, sums);
        rows++;
        if (rows == factor || y == height - 1) {
            shrink_emit(
                sums, columns, out_width, rows, channels, is_opaque, out + (size_t)y_out * out_width * channels);
            memset(sums, 0, (size_t)out_width * channels * sizeof(uint64_t));
            rows = 0;
            y_out++;
        }
    }
}

/// Adds one row of an Adam7 pass (`count` pixels, the first at column `first`, then every `step`) to the sums of
/// the output row it falls in (`sums`, 32 bits a sample: a block of at most 256 × 256 pixels of 255 × 255 fits).
static void shrink_scatter(
    const uint8_t *row, uint32_t count, uint32_t first, uint32_t step, uint32_t factor, int channels, int is_opaque,
    uint32_t *sums) {
    uint32_t x = first;
    uint32_t block = first / factor;
    uint32_t next = (block + 1) * factor;
    const uint8_t *p = row;
    for (uint32_t i = 0; i < count; i++, x += step, p += channels) {
        while (x >= next) {
            block++;
            next += factor;
        }
        uint32_t *s = sums + (size_t)block * channels;
        if (channels == 1) {
            s[0] += p[0];
        } else if (is_opaque) {
            s[0] += p[0];
            s[1] += p[1];
            s[2] += p[2];
        } else {
            uint32_t a = p[3];
            s[0] += p[0] * a;
            s[1] += p[1] * a;
            s[2] += p[2] * a;
            s[3] += a;
        }
    }
}

/// Reads the seven passes of an Adam7 file (libpng's interlace handling off: each pass's rows come as they are
/// stored) into sums for the whole output image, then writes every output row's means. The same blocks and the
/// same means as a file that is not interlaced, in memory for the sums of the output, not the full image.
static void shrink_interlaced(
    png_structp png, uint32_t width, uint32_t height, uint32_t factor, int channels, int is_opaque,
    const uint32_t *columns, uint32_t out_width, uint32_t out_height, uint8_t *row, uint32_t *sums,
    uint64_t *wide, uint8_t *out) {
    size_t out_row = (size_t)out_width * channels;
    for (int pass = 0; pass < 7; pass++) {
        uint32_t count = PNG_PASS_COLS(width, pass);
        uint32_t rows = PNG_PASS_ROWS(height, pass);
        if (count == 0 || rows == 0) continue;  // libpng skips an empty pass
        uint32_t first = PNG_PASS_START_COL(pass);
        uint32_t step = PNG_PASS_COL_OFFSET(pass);
        for (uint32_t r = 0; r < rows; r++) {
            png_read_row(png, row, NULL);
            uint32_t y = PNG_ROW_FROM_PASS_ROW(r, pass);
            shrink_scatter(row, count, first, step, factor, channels, is_opaque, sums + (size_t)(y / factor) * out_row);
        }
    }
    for (uint32_t y_out = 0; y_out < out_height; y_out++) {
        const uint32_t *s = sums + (size_t)y_out * out_row;
        for (size_t i = 0; i < out_row; i++) wide[i] = s[i];
        uint32_t first_row = y_out * factor;
        uint32_t rows = height - first_row < factor ? height - first_row : factor;
        shrink_emit(wide, columns, out_width, rows, channels, is_opaque, out + (size_t)y_out * out_row);
    }
}

int cimago_png_read_shrunk(
    const uint8_t *data, size_t size, uint32_t factor, int channels, uint8_t *out, size_t out_size, char *message,
    size_t message_size) {
    if (message_size > 0) message[0] = 0;
    if (factor < 1 || factor > 256 || (channels != 1 && channels != 4)) return 1;
    shrink_state state = {data, size, 0, message, message_size};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state, shrink_error, shrink_warning);
    if (png == NULL) return -1;
    png_infop info = png_create_info_struct(png);
    // Allocated after setjmp and freed on both paths: volatile, so the values written after setjmp survive the
    // jump back.
    uint8_t *volatile row = NULL;
    uint64_t *volatile sums = NULL;
    uint32_t *volatile columns = NULL;
    uint32_t *volatile image_sums = NULL;
    if (info == NULL || setjmp(png_jmpbuf(png))) {
        free(row);
        free(sums);
        free(columns);
        free(image_sums);
        png_destroy_read_struct(&png, info ? &info : NULL, NULL);
        return -1;
    }
    png_set_read_fn(png, &state, shrink_read);
    png_read_info(png, info);
    uint32_t width = png_get_image_width(png, info);
    uint32_t height = png_get_image_height(png, info);
    int color_type = png_get_color_type(png, info);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    int is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
    int has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
    uint32_t out_width = width / factor + (width % factor != 0);
    uint32_t out_height = height / factor + (height % factor != 0);
    int interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE;
    int handled = width > 0 && height > 0 && (channels == 4 || (is_gray && !has_alpha))
        && (size_t)out_width * out_height * (size_t)channels == out_size;
    if (!handled) {
        png_destroy_read_struct(&png, &info, NULL);
        return 1;
    }
    png_set_expand(png);  // palette to RGB, tRNS to alpha, gray of 1, 2 or 4 bits to 8
    png_set_scale_16(png);  // 16-bit samples rounded to 8 bits (v × 255 / 65535), as the simplified API does
    if (channels == 4) {
        if (is_gray) png_set_gray_to_rgb(png);
        if (!has_alpha) png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    }
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * channels || png_get_channels(png, info) != channels
        || png_get_bit_depth(png, info) != 8) {
        png_destroy_read_struct(&png, &info, NULL);
        return 1;
    }
    row = malloc((size_t)width * channels);
    sums = calloc((size_t)out_width * channels, sizeof(uint64_t));
    columns = malloc((size_t)out_width * sizeof(uint32_t));
    if (row == NULL || sums == NULL || columns == NULL) png_error(png, "out of memory");
    for (uint32_t x = 0; x < out_width; x++) {
        uint32_t first = x * factor;
        columns[x] = width - first < factor ? width - first : factor;
    }
    // A file without alpha has 255 everywhere (the filler): its colour is averaged unweighted.
    int is_opaque = !has_alpha;
    if (interlaced) {
        image_sums = calloc((size_t)out_width * out_height * channels, sizeof(uint32_t));
        if (image_sums == NULL) png_error(png, "out of memory");
        shrink_interlaced(
            png, width, height, factor, channels, is_opaque, columns, out_width, out_height, row, image_sums, sums,
            out);
    } else {
        shrink_sequential(png, height, factor, channels, is_opaque, columns, out_width, row, sums, out);
    }
    // The rest of the image data and the chunks after it, as the simplified API reads them: a bad checksum or a
    // broken stream there fails here as it does there.
    png_read_end(png, NULL);
    free(row);
    free(sums);
    free(columns);
    free(image_sums);
    png_destroy_read_struct(&png, &info, NULL);
    return 0;
}
