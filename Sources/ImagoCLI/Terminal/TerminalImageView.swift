import Foundation
import ImagoCore

/// The CLI's image view: shows images on the terminal as half-block text. It adopts ``ImageDisplaying`` like any
/// other view, so it is bound to a URL with `setImage(with:pipeline:)`, and a rebind cancels the previous load.
final class TerminalImageView: ImageDisplaying, @unchecked Sendable {
    // @unchecked Sendable: `shown` is written on the pipeline's callback queue and read after the load's
    // completion has been awaited (a happens-before edge through the continuation), never concurrently.
    let imageBinder = ImageBinder()
    private(set) var shown: ImageContainer?

    func display(_ image: ImageContainer?, in slot: ImageBinder.Slot) {
        shown = image
    }
}

/// Draws a decoded image, and plays an animation, on a console.
struct TerminalPlayer {
    let console: Console
    let renderer: HalfBlockRenderer
    let columns: Int

    /// Draws the first frame; on a terminal with escape codes, plays an animation for up to `maxLoops` loops
    /// (fewer when the file says so), stopping early when `interrupted()` turns true. The cursor is hidden while
    /// playing and always shown again.
    func show(_ image: ImageContainer, maxLoops: Int = 3, interrupted: () -> Bool) throws {
        let first = try renderer.render(image.image, columns: columns)
        console.write(first.joined(separator: "\n") + "\n")
        guard image.isAnimated, console.usesEscapeCodes else { return }
        let loops = image.loopCount == 0 ? maxLoops : min(maxLoops, image.loopCount)
        // Frames come through frame(at:) and are rendered on first use: an on-demand animation holds only its
        // first frame and decodes the others as they are asked for; the rendered text is small, so later loops
        // reuse it.
        var rendered: [[String]?] = Array(repeating: nil, count: image.frameCount)
        rendered[0] = first
        let durations = image.frameDurations
        console.write("\u{1B}[?25l")
        defer { console.write("\u{1B}[0m\u{1B}[?25h") }
        var isFirstFrame = true  // already drawn above
        for _ in 0..<loops {
            for index in 0..<image.frameCount {
                if !isFirstFrame {
                    let lines = try rendered[index] ?? renderer.render(image.frame(at: index).buffer, columns: columns)
                    rendered[index] = lines
                    console.write("\u{1B}[\(lines.count)F" + lines.joined(separator: "\n") + "\n")
                }
                isFirstFrame = false
                let deadline = ContinuousClock.now + max(durations[index], .milliseconds(20))
                while ContinuousClock.now < deadline {
                    if interrupted() { return }
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
    }
}
