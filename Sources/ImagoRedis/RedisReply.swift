import Foundation

/// One reply from Redis (RESP2), copied out of hiredis's reply object.
enum RedisReply: Sendable, Equatable {
    /// A bulk string (values, `GET`).
    case string(Data)
    /// A status line such as `OK`.
    case status(String)
    /// An integer.
    case integer(Int)
    /// A nil bulk or array (absent key, `SET … NX` that did not set).
    case null
    /// An array of replies.
    case array([RedisReply])
    /// An error line such as `NOAUTH Authentication required.`.
    case error(String)

    /// The bytes of a bulk string, else `nil`.
    var data: Data? {
        if case .string(let data) = self { return data }
        return nil
    }

    /// The integer value (also of a numeric bulk string), else `nil`.
    var integer: Int? {
        switch self {
        case .integer(let value): value
        case .string(let data): Int(String(decoding: data, as: UTF8.self))
        default: nil
        }
    }
}
