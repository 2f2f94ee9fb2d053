import Imago

/// The `imago` command-line tool as a library, so tests drive it in-process.
public enum CLI {
    /// Runs the tool with `arguments` (without the program name); returns the exit status.
    public static func run(_ arguments: [String]) async -> Int32 {
        0
    }
}
