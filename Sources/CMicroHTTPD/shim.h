#ifndef IMAGO_CMICROHTTPD_SHIM_H
#define IMAGO_CMICROHTTPD_SHIM_H

#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/// Leaves the URL path exactly as the client sent it: the image proxy checks its signature over the raw bytes and
/// percent-decodes the source URL itself (MHD's default unescaper would decode `%2F` before either could).
static size_t imago_mhd_keep_escaped(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    return strlen(text);
}

/// The status of a request libmicrohttpd answered itself, before any handler saw it (414 for a request line and 431
/// for header fields over the connection's 16 KiB, 400 for a malformed header, 413, 505 …), read from the line it
/// logs for each (`MHD_USE_ERROR_LOG`): "Error processing request (HTTP response code is %u ('%s')). Closing
/// connection." Returns 0 for any other line (`format` and `arguments` as the logger received them; the
/// arguments are read only for that line, whose first is the status).
static inline unsigned int imago_mhd_rejection_status(const char *format, va_list arguments) {
    if (format == NULL || strstr(format, "HTTP response code is %u") == NULL) return 0;
    return va_arg(arguments, unsigned int);
}

/// `MHD_start_daemon` is variadic, which Swift cannot call: this typed wrapper passes the options the server uses.
/// `threadPoolSize` polling threads (1: the daemon's own thread only) share the listening socket, each with its own
/// epoll set. Each connection has 16 KiB for the request and the response headers (libmicrohttpd clears a
/// connection's memory between requests, so its default 32 KiB costs a 32 KiB memset per keep-alive request; nginx
/// reads a request line of up to 8 KiB).
///
/// It listens on `listenSocket` when that is not -1 (a socket already bound and listening, such as a Unix domain
/// socket: libmicrohttpd closes it when the daemon stops), else on `address`, a `sockaddr_in` or (with
/// `MHD_USE_IPv6` in `flags`) a `sockaddr_in6`; its port 0 picks a free one. `reusePort` non-zero sets
/// `SO_REUSEPORT` on the listening socket it opens, so that several processes can listen on one port and the
/// kernel spreads connections among them; zero leaves libmicrohttpd's default (`SO_REUSEADDR` only: passing the
/// option as false would turn that off too). `logger` (with `loggerContext`) receives libmicrohttpd's log lines
/// when `flags` has `MHD_USE_ERROR_LOG` (see `imago_mhd_rejection_status`).
static inline struct MHD_Daemon *imago_mhd_start(
    unsigned int flags, const struct sockaddr *address, int listenSocket, unsigned int connectionLimit,
    unsigned int connectionTimeout, unsigned int listenBacklog, unsigned int threadPoolSize,
    MHD_AccessHandlerCallback handler, void *handlerContext, MHD_RequestCompletedCallback completed,
    void *completedContext, MHD_LogCallback logger, void *loggerContext, unsigned int reusePort) {
// The options after the listening one, the same for both.
#define IMAGO_MHD_OPTIONS                                                                                          \
    MHD_OPTION_CONNECTION_LIMIT, connectionLimit, MHD_OPTION_CONNECTION_TIMEOUT, connectionTimeout,                \
        MHD_OPTION_LISTEN_BACKLOG_SIZE, listenBacklog, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),    \
        MHD_OPTION_THREAD_POOL_SIZE, threadPoolSize, MHD_OPTION_NOTIFY_COMPLETED, completed, completedContext,     \
        MHD_OPTION_UNESCAPE_CALLBACK, imago_mhd_keep_escaped, NULL, MHD_OPTION_EXTERNAL_LOGGER, logger,            \
        loggerContext
    if (listenSocket != -1) {
        return MHD_start_daemon(
            flags, 0, NULL, NULL, handler, handlerContext, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listenSocket,
            IMAGO_MHD_OPTIONS, MHD_OPTION_END);
    }
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handlerContext, MHD_OPTION_SOCK_ADDR, address, IMAGO_MHD_OPTIONS,
        // Last, so that without it the list ends here and the value after it is never read.
        reusePort ? MHD_OPTION_LISTENING_ADDRESS_REUSE : MHD_OPTION_END, (unsigned int)1, MHD_OPTION_END);
#undef IMAGO_MHD_OPTIONS
}

/// The port the daemon listens on (the chosen one when started on port 0); 0 if MHD cannot say.
static inline uint16_t imago_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The client's address of `connection` as text (`MHD_get_connection_info` is variadic, which Swift cannot call):
/// dotted IPv4, IPv6 (an IPv4-mapped one as dotted IPv4), or `unix` for a Unix socket, written into `out` (at
/// least `INET6_ADDRSTRLEN` bytes). Returns 0 when libmicrohttpd has none.
static inline int imago_mhd_client_address(struct MHD_Connection *connection, char *out, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || size < INET6_ADDRSTRLEN) return 0;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        return inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, out, (socklen_t)size) != NULL;
    }
    if (address->sa_family == AF_INET6) {
        const struct in6_addr *v6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(v6)) return inet_ntop(AF_INET, &v6->s6_addr[12], out, (socklen_t)size) != NULL;
        return inet_ntop(AF_INET6, v6, out, (socklen_t)size) != NULL;
    }
    if (address->sa_family == AF_UNIX) {
        strncpy(out, "unix", size);
        return 1;
    }
    return 0;
}

#endif
