import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension ChildProcessDecoder {
    /// The child's side of a ``ChildProcessDecoder``: reads requests on standard input one after another, decodes
    /// each with `decoder` in this process and writes its answer on standard output, until the input ends. Returns
    /// the exit status: 0 at the end of the input, 2 after input that was not a request.
    ///
    /// A program that a parent starts as its ``executable`` calls this and exits with what it returns (`imago
    /// heif-decode` does with ``HEIFDecoder``, `imago svg-render` with ``SVGDecoder``). Standard output is kept for
    /// the answers: anything a library prints there goes to `/dev/null`.
    public static func runChild(decoding decoder: any ImageDecoding) -> Int32 {
        let answers = dup(1)
        let null = open("/dev/null", O_WRONLY)
        if null >= 0 {
            dup2(null, 1)
            close(null)
        }
        func write(_ bytes: Data) {
            bytes.withUnsafeBytes { _ = FileDescriptorWriting.writeAll(answers, $0) }
        }
        while true {
            guard let length = readExactly(4) else { return 0 }  // the end of the requests
            let jsonLength = Int(ChildProcessMessage.number(length))
            guard jsonLength <= ChildProcessMessage.jsonLimit, let json = readExactly(jsonLength),
                let requested = try? JSONDecoder().decode(DecodingOptions.self, from: json),
                let dataLength = readExactly(8).map(ChildProcessMessage.number), dataLength <= UInt64(Int.max),
                let data = readExactly(Int(dataLength))
            else {
                write(
                    ChildProcessMessage.answer(CodecError.corrupt(format: .unknown, reason: "not a decoding request")))
                return 2
            }
            var options = requested
            options.animationMemoryBudget = .max  // every frame crosses in the answer
            do {
                let (head, frames) = try ChildProcessMessage.answer(decoder.decode(data, options: options))
                write(head)
                for frame in frames { frame.withUnsafeBytes { _ = FileDescriptorWriting.writeAll(answers, $0) } }
            } catch let error as CodecError {
                write(ChildProcessMessage.answer(error))
            } catch {
                let format = ChildProcessMessage.format(of: data, among: decoder.formats)
                write(ChildProcessMessage.answer(CodecError.corrupt(format: format, reason: "\(error)")))
            }
        }
    }

    /// Exactly `count` bytes of standard input; `nil` when it ends first.
    private static func readExactly(_ count: Int) -> Data? {
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var done = 0
            while done < count {
                let n = read(0, base + done, count - done)
                if n > 0 {
                    done += n
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
        return complete ? data : nil
    }
}
