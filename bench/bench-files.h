// What the C benchmarks under bench/ share: a whole file read into memory and the calling thread's CPU clock.
// Header-only (each benchmark is built alone, from one .c file: `cc -O2 bench/NAME.c …`).
#ifndef IMAGO_BENCH_FILES_H
#define IMAGO_BENCH_FILES_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/// The calling thread's CPU time in milliseconds.
static inline double thread_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/// The whole of `path` in a malloc'ed block (the caller frees it) and its size in `*size`; NULL when the file cannot
/// be opened or read, or is empty.
static inline unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = n > 0 ? malloc((size_t)n) : NULL;
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    *size = n > 0 ? (size_t)n : 0;
    return data;
}

#endif
