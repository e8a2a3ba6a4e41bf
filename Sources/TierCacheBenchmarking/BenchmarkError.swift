/// Why a benchmark could not run, or why one subject failed.
public enum BenchmarkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The workload or the run's settings cannot make requests: no keys, an empty trace, a size
    /// that is not positive, shares that do not add up, …
    case invalidWorkload(String)
    /// A subject's factory threw: the subject could not be opened.
    case subjectUnavailable(subject: String, reason: String)
    /// A subject's tier threw during the run; the run stopped for that subject.
    case subjectFailed(subject: String, reason: String)

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .invalidWorkload(let reason): "invalid workload: \(reason)"
        case .subjectUnavailable(let subject, let reason): "\(subject) could not be opened: \(reason)"
        case .subjectFailed(let subject, let reason): "\(subject) failed during the run: \(reason)"
        }
    }
}
