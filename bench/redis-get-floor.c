// The transport floor of the 200 KB get row (make bench-redis): a C client doing the least a blocking client can
// for one GETRANGE of the key on loopback TCP, with no library: one write(2), a ppoll(2) for the reply, a read(2)
// of its first line, then read(2)s of the payload straight into one malloc'd buffer, freed. No checksum, no
// protocol checks beyond the length. Prints the median of 5 rounds of per-call medians in µs, like redis-get.py.
//
// Usage: redis-get-floor PORT KEY ROUNDS CAP   (the server on 127.0.0.1, no password; CAP as GETRANGE's end)
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    int port = atoi(argv[1]), rounds = atoi(argv[3]);
    const char *key = argv[2], *cap = argv[4];
    if (rounds <= 0) return 2;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) return 1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // as hiredis and redis-py do
    char command[512];
    int length = snprintf(command, sizeof(command), "*4\r\n$8\r\nGETRANGE\r\n$%zu\r\n%s\r\n$1\r\n0\r\n$%zu\r\n%s\r\n",
                          strlen(key), key, strlen(cap), cap);
    if (length <= 0 || length >= (int)sizeof(command)) return 2;
    double *times = malloc(sizeof(double) * (size_t)rounds), medians[5];
    if (times == NULL) return 1;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < rounds; i++) {
            double started = now_us();
            if (write(fd, command, (size_t)length) != length) return 1;
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, 1000) != 1) return 1;
            char head[64];
            ssize_t got = read(fd, head, sizeof(head));
            char *end = got > 0 ? memchr(head, '\r', (size_t)got) : NULL;
            if (end == NULL || head[0] != '$' || end + 1 >= head + got) return 1;
            long size = atol(head + 1), line = end - head + 2, have = got - line;
            if (size <= 0) return 1;
            char *payload = malloc((size_t)size + 2);
            if (payload == NULL) return 1;
            memcpy(payload, head + line, (size_t)have);
            while (have < size + 2) {
                ssize_t n = read(fd, payload + have, (size_t)(size + 2 - have));
                if (n <= 0) return 1;
                have += n;
            }
            free(payload);
            times[i] = now_us() - started;
        }
        qsort(times, (size_t)rounds, sizeof(double), compare);
        medians[round] = times[rounds / 2];
    }
    qsort(medians, 5, sizeof(double), compare);
    printf("%.1f\n", medians[2]);
    return 0;
}
