import CHiredis
import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#endif

/// One blocking hiredis connection. Not thread-safe: each is owned by one ``RedisNode`` lane and used only on that
/// lane's serial queue (never on Swift's cooperative threads, which a blocking read would starve).
final class RedisConnection {
    private let context: OpaquePointer
    private(set) var isBroken = false

    private let commandTimeout: Duration
    /// The largest bulk string accepted in a reply (refused before it is allocated; the cap plus one for values).
    private let replyLimit: Int
    /// Where replies other than large values are read into before hiredis's reader parses them.
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: RedisConnection.readSize, alignment: 16)
    /// The first line of a reply whose reading was deferred (``readReply(deferringOver:)``), else empty.
    private let head: UnsafeMutablePointer<imago_redis_head> = {
        let head = UnsafeMutablePointer<imago_redis_head>.allocate(capacity: 1)
        head.initialize(to: imago_redis_head())
        return head
    }()
    /// Bytes asked of each read(2) of a reply that goes through hiredis's reader.
    static let readSize = 64 * 1024
    /// The emptied reader buffer kept between replies (larger ones are freed after use).
    static let keptReaderBuffer = 1024 * 1024

    /// Connects within `connectTimeout`, sets `commandTimeout` on the socket, then sends `AUTH` and `SELECT` as the
    /// endpoint asks.
    static func open(
        _ endpoint: RedisEndpoint, connectTimeout: Duration, commandTimeout: Duration, replyLimit: Int
    ) throws(SharedCacheError) -> RedisConnection {
        let connectValue = timeval(connectTimeout)
        let made: UnsafeMutablePointer<redisContext>? =
            switch endpoint.address {
            case .tcp(let host, let port): redisConnectWithTimeout(host, Int32(port), connectValue)
            case .unix(let path): redisConnectUnixWithTimeout(path, connectValue)
            }
        guard let made else { throw .unavailable(reason: "hiredis could not allocate a context") }
        if imago_redis_error(made) != 0 {
            let error = failure(made, timeout: connectTimeout, connecting: true)
            redisFree(made)
            throw error
        }
        // From here the connection owns the context (its deinit frees it, on every path below).
        let connection = RedisConnection(made, commandTimeout: commandTimeout, replyLimit: replyLimit)
        imago_redis_keep_reader_buffer(made, keptReaderBuffer)
        guard redisSetTimeout(made, timeval(commandTimeout)) == REDIS_OK else {
            throw .unavailable(reason: "cannot set the command timeout")
        }
        if let password = endpoint.password {
            let args = endpoint.username.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            if case .error(let message) = try connection.command(args.map { Data($0.utf8) }) {
                throw .refused(reason: "AUTH failed: \(message)")
            }
        }
        if endpoint.database != 0 {
            let args = [Data("SELECT".utf8), Data("\(endpoint.database)".utf8)]
            if case .error(let message) = try connection.command(args) {
                throw .refused(reason: "SELECT \(endpoint.database) failed: \(message)")
            }
        }
        return connection
    }

    private init(_ context: UnsafeMutablePointer<redisContext>, commandTimeout: Duration, replyLimit: Int) {
        self.context = OpaquePointer(context)
        self.commandTimeout = commandTimeout
        self.replyLimit = replyLimit
    }

    deinit {
        redisFree(pointer)
        readBuffer.deallocate()
        head.deallocate()
    }

    private var pointer: UnsafeMutablePointer<redisContext> { UnsafeMutablePointer(context) }

    /// Sends one command and reads its reply.
    func command(_ args: [Data]) throws(SharedCacheError) -> RedisReply {
        try pipeline([args])[0]
    }

    /// Sends several commands in one write and reads their replies in order (one round trip). A transport failure
    /// (timeout, reset) breaks the connection: it is dropped by its lane and a new one is made.
    func pipeline(_ commands: [[Data]]) throws(SharedCacheError) -> [RedisReply] {
        try send(commands)
        return try receive(commands.count)
    }

    /// Writes `commands` in one write (blocking, within the command timeout); their replies are read by
    /// ``receive(_:)``.
    func send(_ commands: [[Data]]) throws(SharedCacheError) {
        guard !isBroken else { throw .unavailable(reason: "connection closed") }
        for args in commands {
            let appended = Self.withArgv(args) { argc, argv, lengths in
                redisAppendCommandArgv(pointer, argc, argv, lengths)
            }
            guard appended == REDIS_OK else {
                isBroken = true
                throw Self.failure(pointer, timeout: commandTimeout, connecting: false)
            }
        }
        guard imago_redis_flush(pointer) == REDIS_OK else {
            isBroken = true
            throw Self.failure(pointer, timeout: commandTimeout, connecting: false)
        }
    }

    /// Reads the next `count` replies, each read(2) waiting at most the command timeout.
    func receive(_ count: Int) throws(SharedCacheError) -> [RedisReply] {
        var replies: [RedisReply] = []
        replies.reserveCapacity(count)
        for _ in 0..<count { replies.append(try readReply()) }
        return replies
    }

    /// Whether the next reply starts arriving within `wait` (or the socket closed: reading then reports it).
    func replyArrives(within wait: Duration) -> Bool {
        let (seconds, attoseconds) = wait.components
        return imago_redis_wait_readable(pointer, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000)) == 1
    }

    /// Reads the next reply (a subscriber's next message); blocks up to the command timeout (none when zero).
    func readReply() throws(SharedCacheError) -> RedisReply {
        // Never nil: nothing is deferred.
        try readReply(deferringOver: .max) ?? .null
    }

    /// Reads the next reply, unless it is a bulk string of more than `deferOver` bytes: then only its first line
    /// is read (kept for the next read) and the answer is `nil`. Blocks up to the command timeout per read(2).
    func readReply(deferringOver deferOver: Int) throws(SharedCacheError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        var bulk: UnsafeMutablePointer<CChar>?
        var bulkLength = 0
        guard !isBroken else { throw .unavailable(reason: "connection closed") }
        let status = getReply(&raw, &bulk, &bulkLength, deferOver: deferOver)
        if status == IMAGO_REDIS_DEFERRED { return nil }
        guard status == REDIS_OK else {
            isBroken = true
            throw Self.failure(pointer, timeout: commandTimeout, connecting: false)
        }
        if let bulk { return .string(Data(bytesNoCopy: bulk, count: bulkLength, deallocator: .free)) }
        guard let raw else {
            isBroken = true
            throw Self.failure(pointer, timeout: commandTimeout, connecting: false)
        }
        defer { freeReplyObject(raw) }
        return Self.reply(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Writes the pending commands, then reads the next reply: a hiredis reply object in `raw`, or a large bulk
    /// string read straight into a malloc'd buffer in `bulk` (see `imago_redis_get_reply` in CHiredis's shim.h).
    private func getReply(
        _ raw: inout UnsafeMutableRawPointer?, _ bulk: inout UnsafeMutablePointer<CChar>?, _ bulkLength: inout Int,
        deferOver: Int
    ) -> Int32 {
        imago_redis_get_reply(
            pointer, readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self), readBuffer.count, replyLimit,
            max(0, deferOver), head, &raw, &bulk, &bulkLength)
    }

    /// Wakes a thread blocked reading this connection (the subscriber at shutdown).
    func shutdown() { imago_redis_shutdown(pointer) }

    /// Reads one reply into a Sendable value (bulk strings are copied once).
    private static func reply(_ r: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let reply = r.pointee
        switch reply.type {
        case REDIS_REPLY_STRING:
            guard let str = reply.str else { return .string(Data()) }
            return .string(Data(bytes: str, count: reply.len))
        case REDIS_REPLY_STATUS:
            return .status(reply.str.map { String(cString: $0) } ?? "")
        case REDIS_REPLY_ERROR:
            return .error(reply.str.map { String(cString: $0) } ?? "error")
        case REDIS_REPLY_INTEGER:
            return .integer(Int(reply.integer))
        case REDIS_REPLY_ARRAY:
            guard let elements = reply.element else { return .array([]) }
            return .array((0..<reply.elements).compactMap { i in elements[i].map { Self.reply($0) } })
        default:
            return .null
        }
    }

    /// Calls `body` with argv pointers into one buffer holding every argument (valid only during the call). The
    /// buffer holds the pointers, then the lengths, then the bytes: one allocation, each argument copied by
    /// `memcpy` (Data's generic `copyBytes(to:)` looked up type metadata on every call: ~4 µs of a 200 KB get).
    private static func withArgv<R>(
        _ args: [Data], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
    ) -> R {
        let count = args.count
        var total = 0
        for arg in args { total += arg.count }
        let header = count * (MemoryLayout<UnsafePointer<CChar>?>.stride + MemoryLayout<Int>.stride)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, header + total), alignment: 16)
        defer { buffer.deallocate() }
        let argv = buffer.bindMemory(to: UnsafePointer<CChar>?.self, capacity: count)
        let lengths = (buffer + count * MemoryLayout<UnsafePointer<CChar>?>.stride).bindMemory(
            to: Int.self, capacity: count)
        var bytes = buffer + header
        for (i, arg) in args.enumerated() {
            let length = arg.count
            arg.withUnsafeBytes { source in
                if let base = source.baseAddress, length > 0 { bytes.copyMemory(from: base, byteCount: length) }
            }
            argv[i] = UnsafePointer(bytes.assumingMemoryBound(to: CChar.self))
            lengths[i] = length
            bytes += length
        }
        return body(Int32(count), argv, lengths)
    }

    /// What a context's error flag means for the caller.
    private static func failure(
        _ c: UnsafeMutablePointer<redisContext>, timeout: Duration, connecting: Bool
    ) -> SharedCacheError {
        let text = String(cString: imago_redis_error_text(c))
        let lowered = text.lowercased()
        if lowered.contains("timed out") || lowered.contains("resource temporarily unavailable")
            || lowered.contains("in progress")
        {
            return .timedOut(after: timeout)
        }
        return .unavailable(reason: (connecting ? "connect: " : "") + (text.isEmpty ? "I/O error" : text))
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
