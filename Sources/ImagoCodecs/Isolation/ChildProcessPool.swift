import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The children a ``ChildProcessDecoder`` or ``ChildProcessEncoder`` keeps between requests: up to `idleLimit` idle
/// ones, each ended after `answerLimit` answers (so that whatever a codec library leaks stays bounded), and all of
/// them ended when the pool goes; and one request's round trip through one of them (``call(_:format:timeout:answer:)``).
final class ChildProcessPool: Sendable {
    let executable: URL
    let arguments: [String]
    /// The most idle children kept; 0 starts one for every request.
    let idleLimit: Int
    /// The answers after which a child is ended.
    let answerLimit: Int
    private let idle = Locked<[ChildWorker]>([])

    init(executable: URL, arguments: [String], idleLimit: Int, answerLimit: Int) {
        self.executable = executable
        self.arguments = arguments
        self.idleLimit = max(0, idleLimit)
        self.answerLimit = max(1, answerLimit)
    }

    deinit {
        for worker in idle.withLock({ $0 }) { worker.end() }
    }

    /// What reading a child's answer came to.
    enum Answer<Value> {
        /// The child answered in full, a value or the error its codec threw, and can take another request.
        case answered(Result<Value, CodecError>)
        /// The child cannot be used again.
        case failed(Failure)
    }

    /// Why a child cannot be used again.
    enum Failure: Error {
        /// The request did not all go in.
        case notSent(ChildWorker.Transfer)
        /// The answer stopped before its end.
        case cutOff(ChildWorker.Transfer)
        /// The answer was refused: not an answer, or over the request's limits.
        case refused(CodecError)

        /// The error a request reports, the child having ended with wait `status`.
        func error(status: Int32, format: ImageFormat, timeout: Duration) -> CodecError {
            switch self {
            case .refused(let error): return error
            case .notSent(.timedOut), .cutOff(.timedOut): return .renderingTimedOut(format: format, limit: timeout)
            case .notSent, .cutOff:
                let signal = status & 0x7F
                guard signal != 0, signal != 0x7F else {
                    return .corrupt(
                        format: format,
                        reason: "the \(format) process ended without an answer (exit status \((status >> 8) & 0xFF))")
                }
                let name = strsignal(signal).map { String(cString: $0) } ?? "signal"
                return .corrupt(
                    format: format,
                    reason: "the \(format) process ended on signal \(signal) (\(name)) without an answer")
            }
        }
    }

    /// Sends a request (`head`, then `payload`) to a child and reads its answer with `answer`, all within
    /// `timeout`; the child is taken back after a full answer and ended otherwise. An idle child gone since its last
    /// answer (killed from outside) is replaced by another. Errors name `format`.
    ///
    /// - Throws: ``CodecError``: the child's own, `.renderingTimedOut` after `timeout`, `.corrupt` when no child
    ///   could start, or one ended or answered out of turn.
    func call<Value>(
        _ head: Data, payload: some ContiguousBytes, format: ImageFormat, timeout: Duration,
        answer: (ChildWorker, ContinuousClock.Instant) -> Answer<Value>
    ) throws(CodecError) -> Value {
        while true {
            let worker: ChildWorker
            let reused: Bool
            do {
                (worker, reused) = try checkOut()
            } catch {
                throw CodecError.corrupt(format: format, reason: "the \(format) process could not start: \(error)")
            }
            let deadline = ContinuousClock.now + timeout
            var sent = worker.transmit(head, deadline: deadline)
            if sent == .done { sent = worker.transmit(payload, deadline: deadline) }
            let outcome: Answer<Value>
            if sent == .done {
                if idleLimit == 0 { worker.finishRequests() }
                outcome = answer(worker, deadline)
            } else {
                outcome = .failed(.notSent(sent))
            }
            switch outcome {
            case .answered(let result):
                checkIn(worker)
                return try result.get()
            case .failed(let failure):
                let status = worker.end()
                if reused, case .notSent(.closed) = failure { continue }
                throw failure.error(status: status, format: format, timeout: timeout)
            }
        }
    }

    /// An idle child that is still running, else a new one; `reused` says which.
    func checkOut() throws(ProcessSpawning.Failure) -> (worker: ChildWorker, reused: Bool) {
        while let worker = idle.withLock({ $0.popLast() }) {
            if !worker.hasEnded { return (worker, true) }
            worker.end()
        }
        return (try ChildWorker.start(executable: executable, arguments: arguments), false)
    }

    /// Takes back a child that answered its request in full: kept while there is room and it has answers left,
    /// else ended.
    func checkIn(_ worker: ChildWorker) {
        worker.answered += 1
        let kept =
            worker.answered < answerLimit
            && idle.withLock { workers in
                guard workers.count < idleLimit else { return false }
                workers.append(worker)
                return true
            }
        if !kept { worker.end() }
    }

    /// The process IDs of the idle children now (for tests).
    var idleProcesses: [pid_t] { idle.withLock { $0.map(\.pid) } }
}
