// Interlaced PNG output: see include/PNGWrite.h. C because libpng reports errors by longjmp, which Swift
// cannot catch.
#include "PNGWrite.h"
#include "PNGMessage.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

/// Where the encoded bytes go, and where an error's message is kept for the caller.
typedef struct {
    uint8_t *bytes;
    size_t size;
    size_t capacity;
    size_t max_size;
    char *message;
    size_t message_size;
} writer_state;

static void writer_note(writer_state *state, const char *text) {
    cimago_png_note(state->message, state->message_size, text);
}

static void writer_error(png_structp png, png_const_charp text) {
    writer_note((writer_state *)png_get_error_ptr(png), text);
    png_longjmp(png, 1);
}

static void writer_warning(png_structp png, png_const_charp text) { (void)png, (void)text; }

static void writer_write(png_structp png, png_bytep data, size_t length) {
    writer_state *state = (writer_state *)png_get_io_ptr(png);
    if (length > state->max_size - state->size) png_error(png, "the PNG outgrew its size bound");
    if (state->size + length > state->capacity) {
        size_t capacity = state->capacity * 2;
        if (capacity < state->size + length) capacity = state->size + length;
        if (capacity > state->max_size) capacity = state->max_size;
        uint8_t *grown = realloc(state->bytes, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        state->bytes = grown;
        state->capacity = capacity;
    }
    memcpy(state->bytes + state->size, data, length);
    state->size += length;
}

static void writer_flush(png_structp png) { (void)png; }

int cimago_png_write_interlaced(
    const uint8_t *pixels, size_t row_bytes, uint32_t width, uint32_t height, int color_type,
    const uint8_t *palette, int palette_entries, size_t max_size, uint8_t **out, size_t *out_size,
    char *message, size_t message_size) {
    *out = NULL;
    *out_size = 0;
    if (message_size > 0) message[0] = 0;
    writer_state start = {NULL, 0, 0, max_size, message, message_size};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &start, writer_error, writer_warning);
    png_infop info = png == NULL ? NULL : png_create_info_struct(png);
    // Everything the jump returns to is set before setjmp and not changed after it (no volatile needed): the
    // state that grows is on the heap, behind a pointer that does not change.
    writer_state *state = info == NULL ? NULL : malloc(sizeof(writer_state));
    png_bytep *rows = state == NULL ? NULL : malloc(sizeof(png_bytep) * (height == 0 ? 1 : height));
    if (rows != NULL) {
        *state = start;
        state->capacity = max_size < 65536 ? max_size : 65536;
        state->bytes = malloc(state->capacity == 0 ? 1 : state->capacity);
    }
    if (rows == NULL || state->bytes == NULL) {
        free(rows);
        free(state);
        if (png != NULL) png_destroy_write_struct(&png, info == NULL ? NULL : &info);
        writer_note(&start, "out of memory");
        return -1;
    }
    for (uint32_t y = 0; y < height; y++) rows[y] = (png_bytep)(pixels + (size_t)y * row_bytes);
    png_set_error_fn(png, state, writer_error, writer_warning);
    if (setjmp(png_jmpbuf(png))) {
        free(state->bytes);
        free(state);
        free(rows);
        png_destroy_write_struct(&png, &info);
        if (message_size > 0 && message[0] == 0) writer_note(&start, "libpng failed");
        return -1;
    }
    png_set_write_fn(png, state, writer_write, writer_flush);
    png_set_IHDR(
        png, info, width, height, 8, color_type, PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT,
        PNG_FILTER_TYPE_DEFAULT);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        if (palette_entries < 1 || palette_entries > 256) png_error(png, "a palette holds 1 to 256 entries");
        png_color colors[256];
        png_byte alphas[256];
        int last_translucent = -1;
        for (int i = 0; i < palette_entries; i++) {
            colors[i].red = palette[i * 4];
            colors[i].green = palette[i * 4 + 1];
            colors[i].blue = palette[i * 4 + 2];
            alphas[i] = palette[i * 4 + 3];
            if (alphas[i] != 255) last_translucent = i;
        }
        png_set_PLTE(png, info, colors, palette_entries);
        if (last_translucent >= 0) png_set_tRNS(png, info, alphas, last_translucent + 1, NULL);
    }
    png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *out = state->bytes;
    *out_size = state->size;
    free(state);
    free(rows);
    return 0;
}
