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
