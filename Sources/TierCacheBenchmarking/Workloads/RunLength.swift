/// How long a phase of a run lasts.
public enum RunLength: Sendable, Hashable, CustomStringConvertible {
    /// This many requests, split across the tasks.
    case requests(Int)
    /// Until this much time has passed (each task checks the clock every few requests).
    case duration(Duration)

    /// The length in words, for reports.
    public var description: String {
        switch self {
        case .requests(let count): "\(count) requests"
        case .duration(let duration): "\(duration)"
        }
    }

    /// The most requests a counted phase may have: a run makes its requests up front, 5 bytes each
    /// (an object id and an operation), so 2^31 of them take 10 GiB. A run bounded by a duration
    /// cycles through its workload instead, and may last as long as it likes.
    public static let maximumRequests = 1 << 31

    func validate(_ phase: String) throws(BenchmarkError) {
        switch self {
        case .requests(let count):
            guard count >= 0 else { throw .invalidWorkload("\(phase) cannot have \(count) requests") }
            guard count <= Self.maximumRequests else {
                throw .invalidWorkload(
                    "\(phase) cannot have \(count) requests: at most \(Self.maximumRequests), which are made up front (5 bytes each); run for a duration instead, which cycles"
                )
            }
        case .duration(let duration):
            guard duration >= .zero else { throw .invalidWorkload("\(phase) cannot last \(duration)") }
        }
    }
}
