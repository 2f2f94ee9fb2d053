import Foundation

/// The system's sentence for why a file operation failed, for messages a person reads (the CLI's, a file load's
/// error).
///
/// Foundation's file errors on Linux describe themselves as "The operation could not be completed.
/// (NSCocoaErrorDomain error 512.)" and keep the cause (`ENOTDIR`, `EACCES`, `ENOSPC` …) as their underlying POSIX
/// error: this gives that cause's text ("Not a directory"), else the error's own description without the
/// boilerplate.
package enum SystemReason {
    /// The reason `error` names, e.g. "Not a directory" or "No space left on device".
    package static func of(_ error: Error) -> String {
        var current: NSError? = error as NSError
        while let nsError = current {
            if nsError.domain == NSPOSIXErrorDomain, let text = strerror(Int32(nsError.code)) {
                return String(cString: text)
            }
            current = (nsError.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
        }
        let text = (error as NSError).localizedDescription
        let boilerplate = "The operation could not be completed. "
        return text.hasPrefix(boilerplate) ? String(text.dropFirst(boilerplate.count)) : text
    }
}
