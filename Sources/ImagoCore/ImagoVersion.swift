/// The library's version: what `imago --version` prints and the default `User-Agent` names
/// (``HTTPDataLoader/defaultUserAgent``).
public enum ImagoVersion {
    /// `0.1.0`.
    public static let current = "0.1.0"
}
