import Foundation

/// When a cache entry stops being served: never, after a span of time, or at a moment.
///
/// An expired entry is a miss; caches remove it lazily, when it is next looked up or trimmed.
///
/// ```swift
/// cache.store(thumbnail, for: key, ttl: .after(.seconds(300)))
/// ```
public enum CacheExpiration: Sendable, Hashable {
    /// The entry stays until evicted or removed (the default everywhere).
    case never
    /// The entry expires this long after it is stored (measured on a monotonic clock, so changing the wall clock
    /// does not move it). Zero or negative means already expired: the entry is not stored.
    case after(Duration)
    /// The entry expires at this wall-clock moment (converted to the monotonic clock when stored).
    case at(Date)

    /// The monotonic deadline for an entry stored at `now`, or `nil` for `.never`.
    ///
    /// `.at(date)` is measured from the wall clock's present (`Date()`), so a test clock that only moves `now`
    /// still sees it expire once `now` has advanced past the distance to `date`.
    func deadline(storedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        switch self {
        case .never: return nil
        case .after(let span): return now + span
        case .at(let date): return now + .seconds(date.timeIntervalSinceNow)
        }
    }
}
