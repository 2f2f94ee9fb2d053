import CImagoShims
import Foundation
import ImagoCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One run of a program that reads a request on its standard input and answers on its standard output, for
/// ``ChildProcessDecoder``: started with `posix_spawn` in a process group of its own, with no descriptor of this
/// process but the two pipes (standard error is `/dev/null`), the default `SIGPIPE` and no blocked signal.
///
/// Foundation's `Process` was not used: it learns that a child ended from a socket the child inherits, so a child
/// killed while a process it started still runs (a shell's command) was never seen to end, and
/// `waitUntilExit()` blocked as long as that grandchild lived. Here the whole group is killed, and the child is
/// reaped with `waitpid`.
struct ChildProcess {
    /// How a run ended.
    enum Ending: Equatable {
        /// The child wrote `answer` (all of its standard output) and exited with `status`.
        case answered(Data, status: Int32)
        /// The child ended on `signal`, its output cut off.
        case signalled(Int32)
        /// It had not ended its output by the deadline; its group was killed.
        case timedOut
        /// Its output passed the limit; its group was killed.
        case tooLong
    }

    let executable: URL
    let arguments: [String]

    /// Runs the program with `request` on its standard input; its answer is read up to `limit` bytes and until
    /// `timeout` has passed, when its process group is killed (as it is after an answer over the limit).
    ///
    /// - Throws: ``SpawnError`` when a pipe or the process could not be made.
    func run(_ request: Data, limit: Int, timeout: Duration) throws(SpawnError) -> Ending {
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        guard cimago_pipe_cloexec(&input) == 0 else { throw SpawnError(call: "pipe2", code: errno) }
        guard cimago_pipe_cloexec(&output) == 0 else {
            let code = errno
            close(input[0])
            close(input[1])
            throw SpawnError(call: "pipe2", code: code)
        }
        let pid: pid_t
        do {
            pid = try spawn(standardInput: input[0], standardOutput: output[1])
        } catch {
            for descriptor in input + output { close(descriptor) }
            throw error
        }
        close(input[0])
        close(output[1])
        let deadline = ContinuousClock.now + timeout
        // Kills the group at the deadline also when the child closed its output and went on running; `reaped`,
        // set once waitpid has returned, keeps it from signalling a process group ID that has since been reused.
        let state = Locked((killed: false, reaped: false))
        let timer = DispatchWorkItem {
            state.withLock {
                guard !$0.reaped else { return }
                $0.killed = true
                kill(-pid, SIGKILL)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: timer)
        // The child reads all of its input before it writes, so writing it all first cannot deadlock. A child that
        // ends first (killed, or one that never reads) leaves the pipe without a reader: the write then fails with
        // EPIPE, and its SIGPIPE would end a process that does not ignore it. So the bytes are written with SIGPIPE
        // blocked in the writing thread: the signal stays pending on the thread and goes with it when it ends, and
        // the run ends on the child's missing answer instead.
        let descriptor = input[1]
        let writer = Thread {
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            request.withUnsafeBytes { _ = FileDescriptorWriting.writeAll(descriptor, $0) }
            close(descriptor)
        }
        writer.start()
        let reading = Self.readOutput(output[0], limit: limit, deadline: deadline)
        close(output[0])
        if case .answer = reading {
        } else {
            state.withLock {
                $0.killed = true
                kill(-pid, SIGKILL)
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        timer.cancel()
        let killed = state.withLock {
            $0.reaped = true
            return $0.killed
        }
        switch reading {
        case .timedOut: return .timedOut
        case .tooLong: return .tooLong
        case .answer(let answer):
            if killed { return .timedOut }
            let signal = status & 0x7F
            if signal != 0, signal != 0x7F { return .signalled(signal) }
            return .answered(answer, status: (status >> 8) & 0xFF)
        }
    }

    /// Starts the program in a new process group with `standardInput` and `standardOutput` as its 0 and 1.
    private func spawn(standardInput: Int32, standardOutput: Int32) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        _ = cimago_spawn_close_from(&actions, 3)  // the pipes are close-on-exec whatever this does
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let code = posix_spawn(&pid, executable.path, &actions, &attributes, argv, environ)
        guard code == 0 else { throw SpawnError(call: "posix_spawn", code: code) }
        return pid
    }

    /// What reading a child's output gave.
    private enum Reading {
        /// Everything up to its end.
        case answer(Data)
        /// More than the limit.
        case tooLong
        /// Not all of it by the deadline.
        case timedOut
    }

    /// Everything `descriptor` gives until its end, at most `limit` bytes, by `deadline`.
    private static func readOutput(_ descriptor: Int32, limit: Int, deadline: ContinuousClock.Instant) -> Reading {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let left = deadline - .now
            guard left > .zero else { return .timedOut }
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(clamping: Int(left.timeInterval * 1000) + 1))
            if polled < 0, errno != EINTR { return .answer(data) }
            if polled <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .answer(data)
            }
            if count == 0 { return .answer(data) }
            guard data.count + count <= limit else { return .tooLong }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// A system call that failed while starting the child.
    struct SpawnError: Error, CustomStringConvertible {
        /// The call.
        let call: String
        /// Its error number.
        let code: Int32

        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }
}
