#include "CBenchShims.h"

#include <stdio.h>

int imago_bench_malloc_info(const char *path) {
    FILE *file = fopen(path, "w");
    if (file == NULL) return -1;
    int result = malloc_info(0, file);
    fclose(file);
    return result;
}
