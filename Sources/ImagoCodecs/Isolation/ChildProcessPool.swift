import Foundation
import ImagoCore

/// The children a ``ChildProcessDecoder`` keeps between decodes: up to `idleLimit` idle ones, each ended after
/// `answerLimit` answers (so that whatever a decoding library leaks stays bounded), and all of them ended when the
/// pool goes.
final class ChildProcessPool: Sendable {
    let executable: URL
    let arguments: [String]
    /// The most idle children kept; 0 starts one for every decode.
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

    /// An idle child that is still running, else a new one; `reused` says which.
    func checkOut() throws(ChildWorker.SpawnError) -> (worker: ChildWorker, reused: Bool) {
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
