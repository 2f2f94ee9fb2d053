#ifndef CBENCH_SHIMS_H
#define CBENCH_SHIMS_H
// C that only imago-bench uses, kept out of the library's shims (CImagoShims) so that no shipped module carries it.
#include <stddef.h>

// --- malloc statistics (imago-bench soak) ---
// Swift's Glibc module does not export <malloc.h>; `mallinfo2` is glibc's (2.33 and later).
#include <malloc.h>
/// Bytes glibc's malloc has handed out and not had back (arena blocks in use plus mmapped blocks).
static inline size_t imago_bench_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

#endif
