import Foundation

/// The system's sentence for why a file operation failed, for messages a person reads (the CLI's, a file load's
/// error).
///
/// Foundation's file errors on Linux describe themselves as "The operation could not be completed.
/// (NSCocoaErrorDomain error 512.)" and keep the cause (`ENOTDIR`, `EACCES`, `ENOSPC` …) as their underlying POSIX
/// error: this gives that cause's text ("Not a directory"), else the error's own description without the
/// boilerplate.
package enum SystemReason {
    /// The system's sentence for `code`, an `errno` value (e.g. "Permission denied"), or "errno N" for a
    /// value the system has no sentence for.
    package static func of(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }

    /// The reason `error` names, e.g. "Not a directory" or "No space left on device".
    package static func of(_ error: Error) -> String {
        var current: NSError? = error as NSError
        while let nsError = current {
            if nsError.domain == NSPOSIXErrorDomain { return of(errno: Int32(nsError.code)) }
            current = (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        }
        let text = (error as NSError).localizedDescription
        let boilerplate = "The operation could not be completed. "
        return text.hasPrefix(boilerplate) ? String(text.dropFirst(boilerplate.count)) : text
    }
}
