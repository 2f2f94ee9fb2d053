#include <zlib.h>

// inflateInit is a macro over inflateInit_ (version and struct size arguments): a typed wrapper Swift can call.
static inline int cimago_inflate_init(z_streamp stream) { return inflateInit(stream); }
static inline int cimago_deflate_init(z_streamp stream, int level) { return deflateInit(stream, level); }
// deflateInit2 with windowBits 31: a gzip stream (header and CRC-32 trailer) rather than a zlib one.
static inline int cimago_deflate_init_gzip(z_streamp stream, int level) {
  return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}
