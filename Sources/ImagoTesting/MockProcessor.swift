import Dispatch
import ImagoCore

/// A processor with a given identifier that counts its runs, can be held, and can fail.
///
/// Its effect is visible in pixels: it adds ``redIncrement`` (wrapping) to the red channel of every pixel.
public final class MockProcessor: ImageProcessing, Sendable {
    /// Why a failing mock processor fails.
    public struct Failure: Error, CustomStringConvertible {
        /// "mock processor failure".
        public var description: String { "mock processor failure" }
    }

    private struct State {
        var count = 0
    }

    /// The identifier, as given.
    public let identifier: String
    /// Added to every pixel's red value. Default 1.
    public let redIncrement: UInt8
    /// Whether `process` throws ``Failure``. Default `false`.
    public let fails: Bool
    private let state = Locked(State())
    private let gate = HoldGate()

    /// A processor named `identifier`.
    public init(_ identifier: String, redIncrement: UInt8 = 1, fails: Bool = false) {
        self.identifier = identifier
        self.redIncrement = redIncrement
        self.fails = fails
    }

    /// Runs so far (failures included).
    public var processCount: Int { state.withLock { $0.count } }

    /// Makes later runs wait until ``release()``.
    public func hold() { gate.hold() }

    /// Lets held and later runs go.
    public func release() { gate.release() }

    /// Adds ``redIncrement`` to the red channel (or throws when ``fails``).
    public func process(_ image: PixelBuffer) throws -> PixelBuffer {
        state.withLock { s in
            s.count += 1
        }
        gate.passThrough()
        if fails { throw Failure() }
        var output = image
        for y in 0..<image.height {
            for x in 0..<image.width {
                var p = output[pixel: x, y]
                p.r = p.r &+ redIncrement
                output[pixel: x, y] = p
            }
        }
        return output
    }
}
