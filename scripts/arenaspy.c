// Diagnostic only, not built by the package (RELIABILITY.md §18): an LD_PRELOAD malloc counter for glibc 2.36 on
// x86-64. It finds each block's arena from glibc's chunk header (a thread arena's heap_info at the block's address
// rounded down to 64 MiB), counts live bytes per arena by the allocating thread's name and a size class, and
// whenever an arena's heap grows past its earlier maximum by ARENASPY_STEP bytes (default 256 KiB) prints to stderr
// what is live in that arena at that moment; every ARENASPY_EVERY seconds (default 10) it prints every arena.
//
//   gcc -O2 -shared -fPIC -o /tmp/arenaspy.so scripts/arenaspy.c -lpthread
//   IMAGO_SOAK_REQUESTS=100000 LD_PRELOAD=/tmp/arenaspy.so .build/release/imago-bench soak 2> arenaspy.log
//
// One global mutex and a pointer table (2 x 64 MiB, mapped lazily) make the process slower and its RSS larger:
// read the arena figures it prints, not the soak's RSS. Not for runs under chrt.
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define NARENA 40
#define NTHREAD 64
#define NCLASS 9
#define HEAP_MAX (64UL << 20)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *arena_keys[NARENA];  // [0] = mmapped, [1] = main
static int narena = 2;
static char thread_names[NTHREAD][16];
static int nthread = 1;  // 0 = unknown
static long long live[NARENA][NTHREAD][NCLASS];
static long long live_total[NARENA];
static long long counts[NARENA][NTHREAD][NCLASS];
static size_t heap_size_max[NARENA];
static uintptr_t heaps[NARENA][8];
static int nheaps[NARENA];
static uintptr_t main_brk0;
static struct timespec t0;
static long step = 256 << 10;
static int enabled;
static __thread int in_spy;
static __thread int my_thread = -1;
static __thread unsigned my_count;

// pointer table: key ptr, value = thread idx (8 bits) | size (56 bits)
#define TBITS 23
#define TSIZE (1UL << TBITS)
static uintptr_t *tkeys;
static uint64_t *tvals;

static inline size_t hash(uintptr_t p) { return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ULL >> (64 - TBITS)); }

static void table_put(uintptr_t p, uint64_t v) {
    size_t i = hash(p);
    while (tkeys[i] != 0 && tkeys[i] != p) i = (i + 1) & (TSIZE - 1);
    tkeys[i] = p;
    tvals[i] = v;
}
static int table_take(uintptr_t p, uint64_t *v) {
    size_t i = hash(p);
    while (tkeys[i] != p) {
        if (tkeys[i] == 0) return 0;
        i = (i + 1) & (TSIZE - 1);
    }
    *v = tvals[i];
    // backward-shift deletion
    size_t j = i;
    for (;;) {
        j = (j + 1) & (TSIZE - 1);
        if (tkeys[j] == 0) break;
        size_t k = hash(tkeys[j]);
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            tkeys[i] = tkeys[j];
            tvals[i] = tvals[j];
            i = j;
        }
    }
    tkeys[i] = 0;
    return 1;
}

static int size_class(size_t n) {
    if (n < 256) return 0;
    if (n < 1024) return 1;
    if (n < 4096) return 2;
    if (n < 16384) return 3;
    if (n < 65536) return 4;
    if (n < 262144) return 5;
    if (n < 300000) return 6;  // libcurl's 262,145 B buffer lands here
    if (n < 1048576) return 7;
    return 8;
}
static const char *class_names[NCLASS] = {"<256", "<1K", "<4K", "<16K", "<64K", "<256K", "256K", "<1M", ">=1M"};

static int arena_of(void *p, uintptr_t *heap_out) {
    size_t sz = ((size_t *)p)[-1];
    *heap_out = 0;
    if (sz & 2) return 0;
    if (!(sz & 4)) return 1;
    uintptr_t heap = (uintptr_t)p & ~(HEAP_MAX - 1);
    void *ar = *(void **)heap;
    *heap_out = heap;
    for (int i = 2; i < narena; i++)
        if (arena_keys[i] == ar) return i;
    if (narena < NARENA) {
        arena_keys[narena] = ar;
        return narena++;
    }
    return NARENA - 1;
}

static int thread_index(void) {
    if (my_thread >= 0 && (my_count++ & 1023) != 0) return my_thread;
    char name[16] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    for (int i = 1; i < nthread; i++)
        if (strncmp(thread_names[i], name, 16) == 0) return my_thread = i;
    if (nthread < NTHREAD) {
        memcpy(thread_names[nthread], name, 16);
        return my_thread = nthread++;
    }
    return my_thread = 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
}

static size_t footprint(int a, uintptr_t heap) {
    if (a == 1) return (uintptr_t)sbrk(0) - main_brk0;
    if (heap == 0) return 0;
    int found = 0;
    for (int i = 0; i < nheaps[a]; i++)
        if (heaps[a][i] == heap) found = 1;
    if (!found && nheaps[a] < 8) heaps[a][nheaps[a]++] = heap;
    size_t total = 0;
    for (int i = 0; i < nheaps[a]; i++) total += ((size_t *)heaps[a][i])[2];  // heap_info.size
    return total;
}

static void report_step(int a, size_t fp) {
    char buf[8192];
    int n = snprintf(buf, sizeof buf, "arenaspy %.3f step arena %d %p: heap %zu KiB (was %zu), live %lld KiB:", now_s(),
                     a, arena_keys[a], fp >> 10, heap_size_max[a] >> 10, live_total[a] >> 10);
    for (int t = 0; t < nthread; t++)
        for (int c = 0; c < NCLASS; c++)
            if (live[a][t][c] >= 64 << 10 && n < (int)sizeof buf - 100)
                n += snprintf(buf + n, sizeof buf - n, " [%s %s %lld KiB/%lld]", thread_names[t][0] ? thread_names[t] : "?",
                              class_names[c], live[a][t][c] >> 10, counts[a][t][c]);
    buf[n++] = '\n';
    write(2, buf, n);
}

static void note_alloc(void *p, size_t n) {
    if (!p || !enabled || in_spy) return;
    in_spy = 1;
    pthread_mutex_lock(&lock);
    int t = thread_index();
    uintptr_t heap;
    int a = arena_of(p, &heap);
    int c = size_class(n);
    live[a][t][c] += n;
    counts[a][t][c] += 1;
    live_total[a] += n;
    table_put((uintptr_t)p, ((uint64_t)t << 56) | (n & ((1ULL << 56) - 1)));
    if (a >= 1) {
        size_t fp = footprint(a, heap);
        if (fp > heap_size_max[a] + step) {
            report_step(a, fp);
            heap_size_max[a] = fp;
        }
    }
    pthread_mutex_unlock(&lock);
    in_spy = 0;
}

static void note_free(void *p) {
    if (!p || !enabled || in_spy) return;
    in_spy = 1;
    pthread_mutex_lock(&lock);
    uint64_t v;
    if (table_take((uintptr_t)p, &v)) {
        uintptr_t heap;
        int a = arena_of(p, &heap);
        int t = (int)(v >> 56);
        size_t n = v & ((1ULL << 56) - 1);
        int c = size_class(n);
        live[a][t][c] -= n;
        counts[a][t][c] -= 1;
        live_total[a] -= n;
    }
    pthread_mutex_unlock(&lock);
    in_spy = 0;
}

static void dump(const char *why) {
    char buf[16384];
    int n = snprintf(buf, sizeof buf, "arenaspy %.3f %s\n", now_s(), why);
    for (int a = 0; a < narena; a++) {
        n += snprintf(buf + n, sizeof buf - n, "  arena %d heap %zu KiB live %lld KiB:", a, heap_size_max[a] >> 10,
                      live_total[a] >> 10);
        for (int t = 0; t < nthread; t++)
            for (int c = 0; c < NCLASS; c++)
                if (live[a][t][c] >= 64 << 10 && n < (int)sizeof buf - 200)
                    n += snprintf(buf + n, sizeof buf - n, " [%s %s %lld KiB/%lld]", thread_names[t], class_names[c],
                                  live[a][t][c] >> 10, counts[a][t][c]);
        buf[n++] = '\n';
    }
    write(2, buf, n);
}

static void *ticker(void *arg) {
    (void)arg;
    in_spy = 1;
    int every = getenv("ARENASPY_EVERY") ? atoi(getenv("ARENASPY_EVERY")) : 10;
    for (;;) {
        sleep(every);
        pthread_mutex_lock(&lock);
        dump("tick");
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

__attribute__((constructor)) static void init(void) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    main_brk0 = (uintptr_t)sbrk(0);
    if (getenv("ARENASPY_STEP")) step = atol(getenv("ARENASPY_STEP"));
    tkeys = mmap(NULL, TSIZE * sizeof(uintptr_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    tvals = mmap(NULL, TSIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    memcpy(thread_names[0], "?", 2);
    in_spy = 1;
    pthread_t th;
    pthread_create(&th, NULL, ticker, NULL);
    in_spy = 0;
    enabled = 1;
}

void *malloc(size_t n) { void *p = __libc_malloc(n); note_alloc(p, n); return p; }
void free(void *p) { note_free(p); __libc_free(p); }
void *calloc(size_t a, size_t b) { void *p = __libc_calloc(a, b); note_alloc(p, a * b); return p; }
void *realloc(void *q, size_t n) {
    note_free(q);
    void *p = __libc_realloc(q, n);
    if (p) note_alloc(p, n); else if (q && n) note_alloc(q, malloc_usable_size(q));
    return p;
}
void *memalign(size_t al, size_t n) { void *p = __libc_memalign(al, n); note_alloc(p, n); return p; }
void *aligned_alloc(size_t al, size_t n) { void *p = __libc_memalign(al, n); note_alloc(p, n); return p; }
int posix_memalign(void **out, size_t al, size_t n) {
    void *p = __libc_memalign(al, n);
    if (!p) return ENOMEM;
    note_alloc(p, n);
    *out = p;
    return 0;
}
