import Foundation
import Testing

/// Runs the real `imago` binary on a real terminal (tmux) and reads the screen back, as a person would see it.
@Suite(.serialized, .timeLimit(.minutes(3))) struct TerminalTmuxTests {
    /// The built `imago` next to this test binary (`.build/<triple>/debug/`).
    static var imagoBinary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("imago")
    }

    static var tmux: String? {
        ["/usr/bin/tmux", "/usr/local/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `command` in a detached tmux session `width` columns wide and returns the screen and scroll-back once
    /// the command has printed its end marker (or the deadline passed).
    func runInTmux(_ command: String, width: Int = 120, height: Int = 60) throws -> String {
        guard let tmux = Self.tmux else {
            Issue.record("tmux is not installed; `make test` installs it (scripts/install-deps.sh)")
            return ""
        }
        let socket = "imago-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // One shell drives the whole session: a tmux server started from a Foundation Process that then exits
        // does not survive here, so start, poll, capture and kill all happen inside this script.
        let t = "LC_ALL=C.UTF-8 \(tmux) -u -L \(socket) -f /dev/null"
        let script = """
            \(t) new-session -d -x \(width) -y \(height) "\(command); echo __IMAGO_DONE__ \\$?; sleep 60" </dev/null >/dev/null 2>&1
            i=0
            while [ $i -lt 450 ]; do
              case "$(\(t) capture-pane -p -S -400 2>/dev/null)" in *__IMAGO_DONE__*) break;; esac
              sleep 0.2; i=$((i+1))
            done
            \(t) capture-pane -p -S -400
            \(t) kill-server >/dev/null 2>&1
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func showDrawsHalfBlocksOnARealTerminal() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let file = cliCorpus("kodak/05.png").path
        let screen = try runInTmux(
            "env -u NO_COLOR XDG_CACHE_HOME=\(cache.path) COLORTERM=truecolor \(Self.imagoBinary.path) show \(file) --width 64"
        )
        #expect(screen.contains("__IMAGO_DONE__ 0"), "\(screen)")
        let blockLines = screen.split(separator: "\n").filter { $0.contains("▀") || $0.contains("▄") }
        #expect(blockLines.count >= 20, "expected the rendered image, got:\n\(screen)")
    }

    @Test func demoShowsContactSheetAndSummaryTableOnARealTerminal() throws {
        let cache = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let screen = try runInTmux(
            "env -u NO_COLOR XDG_CACHE_HOME=\(cache.path) COLORTERM=truecolor \(Self.imagoBinary.path) demo --limit 6 --corpus \(cliCorpus("").path)"
        )
        #expect(screen.contains("__IMAGO_DONE__ 0"), "\(screen)")
        #expect(screen.contains("Contact sheet (6 thumbnails"))
        #expect(screen.contains("▀"))
        for row in ["pass", "1 cold (network)", "2 disk (memory cleared)", "3 memory"] {
            #expect(screen.contains(row), "missing '\(row)' in:\n\(screen)")
        }
    }
}
