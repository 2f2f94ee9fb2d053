#include <zlib.h>

// inflateInit is a macro over inflateInit_ (version and struct size arguments): a typed wrapper Swift can call.
static inline int cimago_inflate_init(z_streamp stream) { return inflateInit(stream); }
static inline int cimago_deflate_init(z_streamp stream, int level) { return deflateInit(stream, level); }
