#include <stdint.h>
#include <tiffio.h>

// TIFFGetField and TIFFSetField are variadic, which Swift cannot call: one typed wrapper per argument type.
static inline int imago_tiff_get_uint32(TIFF *tif, uint32_t tag, uint32_t *value) {
    return TIFFGetField(tif, tag, value);
}
static inline int imago_tiff_get_uint16(TIFF *tif, uint32_t tag, uint16_t *value) {
    return TIFFGetField(tif, tag, value);
}
static inline int imago_tiff_get_uint16_defaulted(TIFF *tif, uint32_t tag, uint16_t *value) {
    return TIFFGetFieldDefaulted(tif, tag, value);
}
static inline int imago_tiff_set_uint32(TIFF *tif, uint32_t tag, uint32_t value) {
    return TIFFSetField(tif, tag, value);
}
static inline int imago_tiff_set_uint16(TIFF *tif, uint32_t tag, uint16_t value) {
    // Default argument promotion: libtiff reads 16-bit tags from varargs as int.
    return TIFFSetField(tif, tag, (int)value);
}
static inline int imago_tiff_set_extra_samples(TIFF *tif, uint16_t count, const uint16_t *types) {
    return TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, (int)count, types);
}

#include <stdarg.h>
#include <stdio.h>

// Per-handle error and warning handlers (libtiff 4.5's TIFFOpenOptions): nothing reaches stderr and no
// process-global handler is touched. The error handler keeps the last message in `user_data`, a buffer of
// IMAGO_TIFF_MESSAGE_SIZE bytes; returning 1 stops libtiff from calling the global handlers too.
#define IMAGO_TIFF_MESSAGE_SIZE 256
static inline int imago_tiff_keep_error(TIFF *tif, void *user_data, const char *module, const char *fmt,
                                        va_list ap) {
    (void)tif;
    (void)module;
    if (user_data != NULL) vsnprintf((char *)user_data, IMAGO_TIFF_MESSAGE_SIZE, fmt, ap);
    return 1;
}
static inline int imago_tiff_ignore_warning(TIFF *tif, void *user_data, const char *module, const char *fmt,
                                            va_list ap) {
    (void)tif;
    (void)user_data;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}
static inline void imago_tiff_quiet(TIFFOpenOptions *opts, char *message) {
    TIFFOpenOptionsSetErrorHandlerExtR(opts, imago_tiff_keep_error, message);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, imago_tiff_ignore_warning, NULL);
}

// Byte-array tags with a 32-bit count (TIFFTAG_ICCPROFILE, TIFFTAG_XMLPACKET, TIFFTAG_PHOTOSHOP; for
// TIFFTAG_RICHTIFFIPTC the count is of 32-bit words): a count and a pointer into the handle's own copy (valid
// until TIFFClose).
static inline int imago_tiff_get_bytes(TIFF *tif, uint32_t tag, uint32_t *count, const void **data) {
    return TIFFGetField(tif, tag, count, data);
}

// The same tags take a count and a pointer.
static inline int imago_tiff_set_bytes(TIFF *tif, uint32_t tag, uint32_t count, const void *data) {
    return TIFFSetField(tif, tag, count, data);
}

// ASCII tags (TIFFTAG_ARTIST, TIFFTAG_COPYRIGHT…): a pointer to the handle's NUL-terminated copy.
static inline int imago_tiff_get_string(TIFF *tif, uint32_t tag, const char **value) {
    return TIFFGetField(tif, tag, value);
}

// ASCII tags take a NUL-terminated string, copied by libtiff.
static inline int imago_tiff_set_string(TIFF *tif, uint32_t tag, const char *value) {
    return TIFFSetField(tif, tag, value);
}
