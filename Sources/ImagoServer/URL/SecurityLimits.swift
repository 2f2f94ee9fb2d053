/// imgproxy's security options: limits a URL sets for itself (`max_src_resolution`/`msr`,
/// `max_src_file_size`/`msfs`, `max_animation_frames`/`maf`, `max_animation_frame_resolution`/`mafr`,
/// `max_result_dimension`/`mrd`), refused (400) unless
/// the server allows them (``ImageProxy/Configuration/allowsSecurityOptions``, imgproxy's
/// `IMGPROXY_ALLOW_SECURITY_OPTIONS`). Unlike imgproxy's, they only tighten the server's own limits, never loosen
/// them, so a URL cannot make the server decode more than it was configured to. `nil` (each default): the
/// server's.
public struct SecurityLimits: Sendable, Hashable {
    /// The largest source in pixels (`msr`, given in megapixels); over it, 422. As the server's
    /// ``ImageProxy/Configuration/pixelLimit``: a JPEG or WebP the decoder can produce at a reduced scale within it,
    /// for a smaller result, is served.
    public var maxSourcePixels: Int?
    /// The largest source in bytes (`msfs`); over it, 413. Checked once the source is fetched: the download is
    /// bounded by the loader's own limit (`--max-bytes`) as ever.
    public var maxSourceBytes: Int?
    /// The most frames of an animation kept (`maf`), within the server's
    /// ``ImageProxy/Configuration/maxAnimationFrames``.
    public var maxAnimationFrames: Int?
    /// The largest frame of an animation kept, in canvas pixels (`mafr`, given in megapixels), within the server's
    /// ``ImageProxy/Configuration/maxAnimationFramePixels``. On a server that sums its frames (imgproxy's default),
    /// both rules hold; an animation over either is sent as its first frame.
    public var maxAnimationFramePixels: Int?
    /// The longest side of the result (`mrd`), within the server's
    /// ``ImageProxy/Configuration/maxResultDimension``.
    public var maxResultDimension: Int?

    /// No limits of the URL's own.
    public init() {}

    /// The option name of the first limit set, for the 400 of a server that does not allow them; `nil` when none is.
    var firstSetOption: String? {
        if maxSourcePixels != nil { return "max_src_resolution" }
        if maxSourceBytes != nil { return "max_src_file_size" }
        if maxAnimationFrames != nil { return "max_animation_frames" }
        if maxAnimationFramePixels != nil { return "max_animation_frame_resolution" }
        if maxResultDimension != nil { return "max_result_dimension" }
        return nil
    }

    /// The smaller of `server` and `own` (either may be absent).
    static func tighter(_ server: Int?, _ own: Int?) -> Int? {
        guard let server else { return own }
        guard let own else { return server }
        return min(server, own)
    }
}
