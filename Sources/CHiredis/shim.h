#include <hiredis/hiredis.h>
#include <sys/socket.h>
#include <sys/time.h>

// hiredis's variadic redisCommand cannot be called from Swift; ImagoRedis uses redisCommandArgv and
// redisAppendCommandArgv. These helpers read a context without Swift having to see its fixed-size arrays.

/// The context's error flag (0: none; REDIS_ERR_IO, REDIS_ERR_EOF, …).
static inline int imago_redis_error(const redisContext *c) { return c->err; }

/// The context's error text (NUL-terminated, inside the context).
static inline const char *imago_redis_error_text(const redisContext *c) { return c->errstr; }

/// Shuts the connection's socket down (wakes a thread blocked reading it); the context must still be freed.
static inline void imago_redis_shutdown(redisContext *c) { if (c->fd >= 0) shutdown(c->fd, SHUT_RDWR); }

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/// Lets the reader keep an emptied buffer of up to `bytes` between replies (hiredis's default, 16 KiB, frees and
/// regrows it, realloc by realloc, for every large value).
static inline void imago_redis_keep_reader_buffer(redisContext *c, size_t bytes) { c->reader->maxbuf = bytes; }

/// Sets an error on the context as hiredis does, and returns REDIS_ERR.
static inline int imago_redis_fail(redisContext *c, int type, const char *text) {
    c->err = type;
    snprintf(c->errstr, sizeof(c->errstr), "%s", text);
    return REDIS_ERR;
}

/// read(2) of at most `length` bytes, retried on EINTR; sets the context's error on failure or EOF.
static inline ssize_t imago_redis_read(redisContext *c, char *into, size_t length) {
    for (;;) {
        ssize_t n = read(c->fd, into, length);
        if (n > 0) return n;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) imago_redis_fail(c, REDIS_ERR_IO, strerror(errno));
        else imago_redis_fail(c, REDIS_ERR_EOF, "Server closed the connection");
        return -1;
    }
}

/// Feeds the reader from read(2)s of up to `capacity` bytes into `buffer` until it holds a whole reply.
static inline int imago_redis_read_reply(redisContext *c, char *buffer, size_t capacity, void **reply) {
    for (;;) {
        if (redisReaderGetReply(c->reader, reply) != REDIS_OK)
            return imago_redis_fail(c, REDIS_ERR_PROTOCOL, c->reader->errstr);
        if (*reply != NULL) return REDIS_OK;
        ssize_t n = imago_redis_read(c, buffer, capacity);
        if (n < 0) return REDIS_ERR;
        if (redisReaderFeed(c->reader, buffer, (size_t)n) != REDIS_OK)
            return imago_redis_fail(c, REDIS_ERR_PROTOCOL, c->reader->errstr);
    }
}

/// Bulk strings from this size on are read straight into their own buffer.
#define IMAGO_REDIS_DIRECT_BULK 4096

/// `imago_redis_get_reply`'s answer when the next reply is a bulk string longer than its `defer_over`: nothing was
/// read but the reply's first line, which waits in `head` for the next call.
#define IMAGO_REDIS_DEFERRED 1

/// The first bytes of a reply, read (up to its first line) before knowing whether it is a large bulk string. Kept
/// by the connection between a call that deferred the reply and the one that reads it.
typedef struct {
    char bytes[64];
    size_t count;
} imago_redis_head;

/// Reads into `head` until it holds the reply's first line ("$<length>\r\n" for a bulk string), is full, or does
/// not start with '$'. Returns the line's length with its "\r\n" (0 when it did not end in `head`), or -1 with the
/// context's error set.
static inline long imago_redis_read_head(redisContext *c, imago_redis_head *head) {
    size_t scanned = 1;
    for (;;) {
        if (head->count > 0 && head->bytes[0] != '$') return 0;
        for (; scanned + 1 < head->count; scanned++) {
            if (head->bytes[scanned] == '\r' && head->bytes[scanned + 1] == '\n') return (long)scanned + 2;
        }
        if (head->count == sizeof(head->bytes)) return 0;
        ssize_t n = imago_redis_read(c, head->bytes + head->count, sizeof(head->bytes) - head->count);
        if (n < 0) return -1;
        head->count += (size_t)n;
    }
}

/// redisGetReply for a blocking context (writes pending commands first, then reads the next reply), with a path
/// for large values: when the next reply is a bulk string of at least IMAGO_REDIS_DIRECT_BULK bytes, its payload
/// is read by read(2) straight into one malloc'd buffer returned in `*bulk` (length `*bulk_length`, freed by the
/// caller) and `*reply` stays NULL. hiredis 0.14 would read it 16 KiB at a time into its reader's buffer, grow
/// that buffer realloc by realloc, then copy it into the reply: three copies instead of one. A bulk over `limit`
/// bytes is refused before anything is allocated (REDIS_ERR_PROTOCOL; the connection is then unusable). A bulk
/// over `defer_over` bytes is left unread: IMAGO_REDIS_DEFERRED, its first line kept in `head` for the next call
/// (which must come before any other use of the context). Other replies go through hiredis's reader, read
/// `capacity` bytes at a time into `buffer`. Errors are set on the context as hiredis sets them (REDIS_ERR_IO with
/// strerror's text, REDIS_ERR_EOF, REDIS_ERR_PROTOCOL).
static inline int imago_redis_get_reply(
    redisContext *c, char *buffer, size_t capacity, size_t limit, size_t defer_over, imago_redis_head *head,
    void **reply, char **bulk, size_t *bulk_length) {
    *reply = NULL;
    *bulk = NULL;
    *bulk_length = 0;
    redisReader *r = c->reader;
    if (head->count == 0) {
        if (redisReaderGetReply(r, reply) != REDIS_OK) return imago_redis_fail(c, REDIS_ERR_PROTOCOL, r->errstr);
        if (*reply != NULL) return REDIS_OK;
        int done = 0;
        do {
            if (redisBufferWrite(c, &done) != REDIS_OK) return REDIS_ERR;
        } while (!done);
        // Mid-reply or with bytes buffered, the reader goes on as usual. (redisReaderGetReply on a buffer it has
        // consumed, but not yet discarded, starts a task, ridx 0 of type -1: that is not mid-reply. Testing
        // ridx != -1 alone sent every reply after one the reader parsed, a miss, a counter, to the reader.)
        int idle = r->ridx == -1 || (r->ridx == 0 && r->rstack[0].type == -1);
        if (r->len > r->pos || !idle) return imago_redis_read_reply(c, buffer, capacity, reply);
    }
    // The first line, up to 64 bytes: "$<length>\r\n" for a bulk string.
    long line = imago_redis_read_head(c, head);
    if (line < 0) return REDIS_ERR;
    size_t got = head->count;
    if (line > 3 && line <= 22 && head->bytes[1] >= '0' && head->bytes[1] <= '9') {
        unsigned long long length = 0;
        int digits = 1;
        for (long i = 1; i < line - 2; i++) {
            if (head->bytes[i] < '0' || head->bytes[i] > '9') digits = 0;
            else length = length * 10 + (unsigned long long)(head->bytes[i] - '0');
        }
        size_t have = got - (size_t)line;
        if (digits && length > limit) return imago_redis_fail(c, REDIS_ERR_PROTOCOL, "reply over the size limit");
        if (digits && length > defer_over) return IMAGO_REDIS_DEFERRED;
        if (digits && length >= IMAGO_REDIS_DIRECT_BULK && length + 2 > have) {
            head->count = 0;
            size_t total = (size_t)length + 2;  // the payload and its "\r\n"
            char *out = malloc(total);
            if (out == NULL) return imago_redis_fail(c, REDIS_ERR_OOM, "Out of memory");
            memcpy(out, head->bytes + line, have);
            while (have < total) {
                ssize_t n = imago_redis_read(c, out + have, total - have);
                if (n < 0) {
                    free(out);
                    return REDIS_ERR;
                }
                have += (size_t)n;
            }
            if (out[length] != '\r' || out[length + 1] != '\n') {
                free(out);
                return imago_redis_fail(c, REDIS_ERR_PROTOCOL, "bad bulk string terminator");
            }
            *bulk = out;
            *bulk_length = (size_t)length;
            return REDIS_OK;
        }
    }
    head->count = 0;
    if (redisReaderFeed(r, head->bytes, got) != REDIS_OK) return imago_redis_fail(c, REDIS_ERR_PROTOCOL, r->errstr);
    return imago_redis_read_reply(c, buffer, capacity, reply);
}

#include <poll.h>
#include <signal.h>
#include <time.h>

// ppoll(2) is a GNU extension (hidden without _GNU_SOURCE, which a module header cannot set before the system
// headers); glibc has exported it since 2.4.
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);

/// Writes every command appended so far (blocking, within the socket's send timeout). REDIS_ERR with the context's
/// error set on failure.
static inline int imago_redis_flush(redisContext *c) {
    int done = 0;
    do {
        if (redisBufferWrite(c, &done) != REDIS_OK) return REDIS_ERR;
    } while (!done);
    return REDIS_OK;
}

/// Waits at most `microseconds` for the next reply to start arriving: 1 when bytes can be read (or the reader
/// already holds some, or the socket is closed or failed: the read then reports it), 0 when nothing came in time
/// (or a signal interrupted the wait).
static inline int imago_redis_wait_readable(redisContext *c, long microseconds) {
    if (c->reader->len > c->reader->pos) return 1;
    struct pollfd p = {.fd = c->fd, .events = POLLIN, .revents = 0};
    struct timespec t = {.tv_sec = microseconds / 1000000, .tv_nsec = (microseconds % 1000000) * 1000};
    return ppoll(&p, 1, &t, NULL) > 0 ? 1 : 0;
}
