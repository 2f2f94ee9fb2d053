import Foundation
import ImagoCore

extension ChildProcessDecoder {
    /// The child's side of a ``ChildProcessDecoder``: reads requests on standard input one after another, decodes
    /// each with `decoder` in this process and writes its answer on standard output, until the input ends. Returns
    /// the exit status: 0 at the end of the input, 2 after input that was not a request.
    ///
    /// A program that a parent starts as its ``executable`` calls this and exits with what it returns (`imago
    /// heif-decode` does with ``HEIFDecoder``, `imago svg-render` with ``SVGDecoder``). Standard output is kept for
    /// the answers: anything a library prints there goes to `/dev/null`.
    public static func runChild(decoding decoder: any ImageDecoding) -> Int32 {
        ChildProcessMessage.serveRequests { json, data, write in
            guard var options = try? JSONDecoder().decode(DecodingOptions.self, from: json) else {
                ChildProcessMessage.answer(CodecError.corrupt(format: .unknown, reason: "not decoding options"))
                    .withUnsafeBytes(write)
                return
            }
            options.animationMemoryBudget = .max  // every frame crosses in the answer
            do {
                let (head, frames) = try ChildProcessMessage.answer(decoder.decode(data, options: options))
                head.withUnsafeBytes(write)
                for frame in frames { frame.withUnsafeBytes(write) }
            } catch let error as CodecError {
                ChildProcessMessage.answer(error).withUnsafeBytes(write)
            } catch {
                let format = ChildProcessMessage.format(of: data, among: decoder.formats)
                ChildProcessMessage.answer(CodecError.corrupt(format: format, reason: "\(error)")).withUnsafeBytes(
                    write)
            }
        }
    }
}
