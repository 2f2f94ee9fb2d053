/// How urgently a request should run; queued work starts highest priority first.
public enum RequestPriority: Int, Sendable, Hashable, Comparable, CaseIterable, Codable, CustomStringConvertible {
    /// Prefetching far ahead.
    case veryLow = 0
    /// Prefetching.
    case low = 1
    /// The default.
    case normal = 2
    /// Visible now.
    case high = 3
    /// Needed immediately.
    case veryHigh = 4

    /// Orders by urgency.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The case name.
    public var description: String {
        switch self {
        case .veryLow: "veryLow"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .veryHigh: "veryHigh"
        }
    }
}
