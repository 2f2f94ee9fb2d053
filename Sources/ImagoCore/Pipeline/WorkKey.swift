import Foundation

/// What identifies a load in flight: requests with equal keys share one download.
struct DataLoadKey: Hashable, Sendable {
    /// One request header, its name lowercased.
    struct Header: Hashable, Sendable {
        let name: String
        let value: String
    }

    /// The source and whose credentials (see ``ImageRequest/failureKey``).
    let failure: FailureCache.Key
    /// The whole URL when the key policy dropped part of it (so each caller loads with its own token), else `nil`.
    let url: URL?
    /// The request's headers, sorted by name.
    let headers: [Header]
    /// The request's options that change what a load does.
    let options: ImageRequest.Options
}

/// What identifies the image of a stage in flight (the decode, or one processor prefix).
struct ImageWorkKey: Hashable, Sendable {
    /// The load the image is made from.
    let load: DataLoadKey
    /// The image made (the request's key after that many processors).
    let image: ImageCacheKey
    /// The request's options that change what the stage does.
    let options: ImageRequest.Options
    /// The request's own decoding options, when it has them.
    let decodingOptions: DecodingOptions?
}

/// The name of a piece of shared work in the ``WorkGraph``.
enum WorkKey: Hashable, Sendable {
    /// The encoded bytes of a load.
    case data(DataLoadKey)
    /// A decoded or processed image.
    case image(ImageWorkKey)
}
