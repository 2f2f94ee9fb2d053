import Dispatch
import Foundation
import ImagoCore

/// A decoder of a tiny test format, counting its decodes and able to hold them so races are set up on purpose.
///
/// The format: `"IMGO"`, width and height (UInt16 big-endian), one RGBA colour (4 bytes), a payload length
/// (UInt32 big-endian) and that many payload bytes (ignored; they give the file a size to stream). Every pixel of
/// the decoded image has the colour. Make files with ``make(width:height:color:payloadCount:)``. Data cut short
/// decodes as a preview when partial data is allowed (else ``CodecError/truncated(format:)``). It sniffs as
/// `.unknown`, which is the format it claims.
public final class MockImageDecoder: ImageDecoding, Sendable {
    private struct State {
        var decodeCount = 0
        var partialDecodeCount = 0
        var targetSizes: [PixelSize?] = []
        var targetModes: [DecodingOptions.TargetMode] = []
    }

    private let state = Locked(State())
    private let gate = HoldGate()

    /// A decoder with no decodes counted.
    public init() {}

    /// `[.unknown]`: the test format is not a registered one.
    public var formats: Set<ImageFormat> { [.unknown] }

    /// Complete decodes so far.
    public var decodeCount: Int { state.withLock { $0.decodeCount } }
    /// Decodes of partial data (previews) so far.
    public var partialDecodeCount: Int { state.withLock { $0.partialDecodeCount } }
    /// The target size of every decode, in order.
    public var targetSizes: [PixelSize?] { state.withLock { $0.targetSizes } }
    /// The ``DecodingOptions/targetMode`` of every decode, in order.
    public var targetModes: [DecodingOptions.TargetMode] { state.withLock { $0.targetModes } }

    /// Makes later decodes wait (blocking their thread) until ``release()``.
    public func hold() { gate.hold() }

    /// Lets held and later decodes run.
    public func release() { gate.release() }

    /// How many decodes wait in ``hold()`` now.
    public var heldCount: Int { gate.waitingCount }

    /// The bytes of a test image.
    public static func make(width: Int, height: Int, color: RGBA, payloadCount: Int = 0) -> Data {
        var data = Data("IMGO".utf8)
        data.append(contentsOf: [
            UInt8(width >> 8 & 0xFF), UInt8(width & 0xFF), UInt8(height >> 8 & 0xFF), UInt8(height & 0xFF),
        ])
        data.append(contentsOf: [color.r, color.g, color.b, color.a])
        let n = UInt32(payloadCount)
        data.append(contentsOf: [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)])
        data.append(Data(repeating: 0x55, count: payloadCount))
        return data
    }

    /// Decodes the test format; counts the decode first, then waits while held.
    public func decode(_ data: Data, options: DecodingOptions) throws -> ImageContainer {
        state.withLock { s in
            if options.allowsPartialData { s.partialDecodeCount += 1 } else { s.decodeCount += 1 }
            s.targetSizes.append(options.targetSize)
            s.targetModes.append(options.targetMode)
        }
        gate.passThrough()
        let b = [UInt8](data.prefix(16))
        guard b.count == 16, b[0] == 0x49, b[1] == 0x4D, b[2] == 0x47, b[3] == 0x4F else {
            throw CodecError.corrupt(format: .unknown, reason: "not a test image (no IMGO header)")
        }
        let width = Int(b[4]) << 8 | Int(b[5])
        let height = Int(b[6]) << 8 | Int(b[7])
        let color = RGBA(r: b[8], g: b[9], b: b[10], a: b[11])
        let payload = Int(BigEndian.u32(b, at: 12))
        let isComplete = data.count >= 16 + payload
        if !isComplete, !options.allowsPartialData { throw CodecError.truncated(format: .unknown) }
        try options.checkDimensions(width: width, height: height, format: .unknown)
        var size = PixelSize(width: width, height: height)
        if let target = options.targetSize, options.targetMode == .cover {
            size = size.covering(target)
        } else if let target = options.targetSize, width > target.width || height > target.height {
            let scale = min(Double(target.width) / Double(width), Double(target.height) / Double(height))
            size = PixelSize(width: max(1, Int(Double(width) * scale)), height: max(1, Int(Double(height) * scale)))
        }
        let buffer = try PixelBuffer.filled(size: size, color: color)
        return ImageContainer(
            frames: [ImageFrame(buffer: buffer)], format: .unknown, isPreview: !isComplete,
            originalSize: PixelSize(width: width, height: height))
    }
}

/// An encoder writing the test format of ``MockImageDecoder`` (the colour of the first pixel), counting encodes.
public final class MockImageEncoder: ImageEncoding, Sendable {
    private let count = Locked(0)

    /// An encoder with no encodes counted.
    public init() {}

    /// `.unknown`, the test format.
    public var format: ImageFormat { .unknown }

    /// Encodes so far.
    public var encodeCount: Int { count.withLock { $0 } }

    /// The test-format bytes of `image`.
    public func encode(_ image: PixelBuffer, options: EncodingOptions) throws -> Data {
        count.withLock { $0 += 1 }
        return MockImageDecoder.make(width: image.width, height: image.height, color: image[pixel: 0, 0])
    }
}

extension PixelBuffer {
    /// An RGBA buffer of `size` with every pixel `color`.
    public static func filled(size: PixelSize, color: RGBA) throws -> PixelBuffer {
        try PixelBuffer(width: size.width, height: size.height, format: .rgba8) { raw in
            var i = 0
            while i < raw.count {
                raw[i] = color.r
                raw[i + 1] = color.g
                raw[i + 2] = color.b
                raw[i + 3] = color.a
                i += 4
            }
        }
    }
}
