import Foundation
import ImagoCore

/// Runs a profile's `credential_process` (``AWSCredentialSource/process(command:)``) as the AWS SDKs do: the
/// command line by `/bin/sh -c`, its standard output read as the credentials' JSON (`Version` 1, `AccessKeyId`,
/// `SecretAccessKey`, `SessionToken`, `Expiration`), its standard error discarded.
///
/// The run is bounded: the shell is killed after its timeout and after 64 KiB of output (a command it started
/// that keeps running is left to finish on its own, unread); the JSON's secrets never reach an error's text.
enum AWSCredentialProcess {
    /// The most output read.
    static let maximumOutput = 64 << 10

    /// What the process printed, parsed.
    struct Answer: Decodable {
        var Version: Int?
        var AccessKeyId: String?
        var SecretAccessKey: String?
        var SessionToken: String?
        var Expiration: String?
    }

    /// The output of `command`, which must exit 0 within `timeout`.
    ///
    /// - Throws: ``AWSCredentialProvider/Failure`` for a command that cannot start, fails, runs too long or prints
    ///   too much.
    static func output(of command: String, timeout: Duration) async throws -> Data {
        // The reads and the wait block: on the queue for blocking work, off the threads of Swift's executor.
        try await WorkQueue.blocking.value(priority: .high) { run(command, timeout: timeout) }.get()
    }

    /// Runs `command` in a process group of its own (so that every process it starts is killed with it), reading
    /// its output until the end, the limit or the deadline, and waits for the shell.
    private static func run(_ command: String, timeout: Duration) -> Result<Data, AWSCredentialProvider.Failure> {
        func failure(_ text: String) -> Result<Data, AWSCredentialProvider.Failure> {
            .failure(AWSCredentialProvider.Failure(description: "the credential_process \(text)"))
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return failure("could not start (no pipe)") }
        defer { close(pipeEnds[0]) }
        let pid: pid_t
        do {
            pid = try ProcessSpawning.spawn(
                "/bin/sh", arguments: ["-c", command], standardInput: .null, standardOutput: .descriptor(pipeEnds[1]),
                closing: [pipeEnds[0], pipeEnds[1]])
        } catch {
            close(pipeEnds[1])
            return failure("could not start (error \(error.code))")
        }
        close(pipeEnds[1])

        let deadline = ContinuousClock.now + timeout
        func millisecondsLeft() -> Int32 {
            let left = deadline - .now
            return left <= .zero ? 0 : Int32(min(Int(Int32.max), max(1, Int(left.timeInterval * 1000))))
        }
        var data = Data()
        var stop: String?
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let left = millisecondsLeft()
            guard left > 0 else {
                stop = "ran over \(timeout)"
                break
            }
            var ready = pollfd(fd: pipeEnds[0], events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, left)
            if polled == 0 || (polled < 0 && errno == EINTR) { continue }
            guard polled > 0 else { break }
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }  // the end (or an error: what was read is judged)
            data.append(contentsOf: buffer[..<count])
            if data.count > maximumOutput {
                stop = "printed over 64 KiB"
                break
            }
        }
        // The shell, after its output ended: it may still be running (its output closed early) until the deadline.
        var status: Int32 = 0
        var reaped = false
        while stop == nil, !reaped {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                reaped = true
            } else if done < 0 && errno != EINTR {
                break
            } else if millisecondsLeft() == 0 {
                stop = "ran over \(timeout)"
            } else {
                usleep(2_000)
            }
        }
        kill(-pid, SIGKILL)  // the group: whatever the command left running
        if !reaped {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        if let stop { return failure(stop) }
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        guard status & 0x7F == 0 else { return failure("was killed by signal \(status & 0x7F)") }
        let exit = (status >> 8) & 0xFF
        guard exit == 0 else { return failure("exited with status \(exit)") }
        return .success(data)
    }

    /// The credentials `command` prints, kept until their `Expiration` (for good without one).
    static func credentials(
        of command: String, timeout: Duration
    ) async throws -> ExpiringCredential<AWSSigning.Credentials>.Issued {
        let printed = try await output(of: command, timeout: timeout)
        let answer = try? JSONDecoder().decode(Answer.self, from: printed)
        guard let answer, answer.Version == 1, let key = answer.AccessKeyId, !key.isEmpty,
            let secret = answer.SecretAccessKey, !secret.isEmpty
        else {
            throw AWSCredentialProvider.Failure(
                description: "the credential_process did not print Version 1 JSON with AccessKeyId and SecretAccessKey")
        }
        let credentials = AWSSigning.Credentials(
            accessKeyID: key, secretAccessKey: secret,
            sessionToken: answer.SessionToken?.isEmpty == false ? answer.SessionToken : nil)
        guard let expiration = answer.Expiration else { return .init(value: credentials, expiresAt: nil) }
        guard let date = try? Date(expiration, strategy: .iso8601) else {
            throw AWSCredentialProvider.Failure(description: "the credential_process printed an unreadable Expiration")
        }
        return .init(value: credentials, expiresAt: .now + .seconds(max(60, date.timeIntervalSinceNow)))
    }
}
