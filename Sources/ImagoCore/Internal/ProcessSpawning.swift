#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Starting a program the one way Imago starts one: `posix_spawn`, the program in a process group of its own (so
/// that killing the group kills whatever it started too), no signal blocked, `SIGPIPE` at its default (a server
/// that ignores it would otherwise hand that on), standard error to `/dev/null`. `ImagoCurl`'s
/// `credential_process` and `ImagoCodecs`'s codec children start this way.
package enum ProcessSpawning {
    /// What one of the child's standard input and output is.
    package enum Descriptor: Sendable {
        /// A descriptor of this process, duplicated into the child.
        case descriptor(Int32)
        /// `/dev/null`.
        case null
    }

    /// A system call that failed while starting a program.
    package struct Failure: Error, CustomStringConvertible, Sendable {
        /// The call.
        package let call: String
        /// Its error number.
        package let code: Int32

        /// A failure of `call` with error number `code`.
        package init(call: String, code: Int32) {
            self.call = call
            self.code = code
        }

        /// `call: the error's text`.
        package var description: String { "\(call): \(String(cString: strerror(code)))" }
    }

    /// Starts `path` with `arguments` after it (its own path is `argv[0]`) and `environment` (default `nil`: this
    /// process's), its standard input and output as given, `closing` closed in it, and the file actions `more`
    /// adds last (default none). Returns the child's process ID, which is also its process group's.
    package static func spawn(
        _ path: String, arguments: [String], environment: [String]? = nil, standardInput: Descriptor,
        standardOutput: Descriptor, closing: [Int32] = [],
        more: (UnsafeMutablePointer<posix_spawn_file_actions_t>) -> Void = { _ in }
    ) throws(Failure) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, target) in [(standardInput, Int32(0)), (standardOutput, 1)] {
            switch descriptor {
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, target)
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        for descriptor in closing { posix_spawn_file_actions_addclose(&actions, descriptor) }
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        more(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let code: Int32
        if let environment {
            let envp = environment.map { strdup($0) } + [nil]
            defer { for variable in envp { free(variable) } }
            code = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        } else {
            code = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
        guard code == 0 else { throw Failure(call: "posix_spawn", code: code) }
        return pid
    }
}
