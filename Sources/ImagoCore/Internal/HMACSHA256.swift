/// HMAC-SHA256 (RFC 2104) over the package's pure-Swift ``SHA256``: what imgproxy signs its URLs with, and Azure
/// Storage's Shared Key requests.
package enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key`.
    package static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let blockSize = 64
        var block = key.count > blockSize ? SHA256.hash(key).bytes : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message).bytes
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner).bytes
    }
}
