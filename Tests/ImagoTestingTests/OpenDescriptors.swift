import Foundation

/// What each open descriptor of this process refers to (`socket:[123]`, `pipe:[456]` …), unique while open.
///
/// Other tests run in the same process at the same time, so leak tests compare identities, not counts.
func openDescriptorTargets(_ descriptors: [Int32]? = nil) -> Set<String> {
    let names =
        descriptors.map { $0.map(String.init) }
        ?? (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return Set(names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") })
}
