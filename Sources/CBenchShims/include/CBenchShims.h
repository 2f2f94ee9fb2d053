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

/// Bytes glibc's arenas hold from the kernel (main heap and thread arenas, not mmapped blocks), in use or free.
static inline size_t imago_bench_arena_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.arena;
}

/// Free bytes inside the arenas: memory malloc keeps for reuse without returning it (fragmentation when RSS
/// grows but the heap in use does not).
static inline size_t imago_bench_arena_free_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
}

/// glibc's `malloc_info(0, …)` XML (every arena: its size, its free chunks by size class) written to `path`;
/// 0 on success, -1 when the file could not be opened.
int imago_bench_malloc_info(const char *path);

#endif
