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

    func validate(_ phase: String) throws(BenchmarkError) {
        switch self {
        case .requests(let count):
            guard count >= 0 else { throw .invalidWorkload("\(phase) cannot have \(count) requests") }
        case .duration(let duration):
            guard duration >= .zero else { throw .invalidWorkload("\(phase) cannot last \(duration)") }
        }
    }
}
