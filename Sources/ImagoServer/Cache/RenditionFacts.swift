import Foundation
import ImagoCore

/// What is known about how an output was made beyond its bytes, kept beside it in every tier of the output cache
/// (``DataCacheMetadata/extra``, as JSON), so that it survives a restart and is shared by a fleet. Each fact is
/// `nil` when the render did not learn it or the server does not use it (the validators with
/// ``ImageProxy/Configuration/passesSourceCacheControl``, the rest with
/// ``ImageProxy/Configuration/sendsDebugHeaders``), so a server with neither stores no facts at all.
struct RenditionFacts: Sendable, Hashable, Codable {
    /// The source's validators, when the render recorded its freshness
    /// (``ImageProxy/Configuration/passesSourceCacheControl``) and the source had some: an output whose source
    /// revalidates to the same ones is still current, and is not rendered again.
    var sourceValidators: HTTPValidators?
    /// The source's size in bytes, when the render fetched them before rendering.
    var sourceByteCount: Int?
    /// The source image's pixel size.
    var sourceSize: PixelSize?
    /// The output's pixel size (its first frame's, for an animation).
    var resultSize: PixelSize?
    /// How many times in a row the output was answered stale because its origin failed or timed out; `nil`
    /// since the origin last answered. The retry interval doubles with each
    /// (``ImageProxy/Configuration/staleRetryInterval``).
    var staleAnswers: Int?

    /// No facts.
    init() {}

    /// The facts in a cache entry's `extra` bytes: none when there are none, or when they cannot be read (an
    /// entry written by another version), which costs a render at most, never a wrong answer.
    init(decoding extra: Data?) {
        guard let extra, let facts = try? JSONDecoder().decode(Self.self, from: extra) else { return }
        self = facts
    }

    /// The bytes for a cache entry's `extra`: `nil` when there are no facts. Validators that would take them
    /// over ``DataCacheMetadata/maximumExtraLength`` are left out (the first renewal then renders), so the
    /// entry is never refused for them.
    var encoded: Data? {
        guard self != RenditionFacts(), let data = try? JSONEncoder().encode(self) else { return nil }
        guard data.count > DataCacheMetadata.maximumExtraLength else { return data }
        var smaller = self
        smaller.sourceValidators = nil
        return smaller.encoded
    }
}
