/// Everything a run measured, in run order: each subject at each concurrency, baselines
/// included, ready for ``report(title:)`` or `JSONEncoder`.
public struct BenchmarkResults: Sendable, Codable, Hashable {
    /// The workload, in words.
    public var workload: String
    /// The measured phase's length, in words.
    public var length: String
    /// The warm-up's length, in words.
    public var warmUp: String
    /// Active processors on the machine that ran it.
    public var processors: Int
    /// One result per subject and concurrency.
    public var results: [SubjectResult]

    /// `result`'s throughput over its baseline's at the same concurrency, in this run; `nil`
    /// without a baseline, or when either failed, had stores fail or counted tier errors (a
    /// lookup a tier failed is a miss: it did not do the work).
    public func throughputRatio(of result: SubjectResult) -> Double? {
        guard let name = result.baseline, result.failure == nil, result.failedStores == 0, result.tierErrors == 0,
            let baseline = results.first(where: { $0.subject == name && $0.tasks == result.tasks && $0.isBaseline }),
            baseline.failure == nil, baseline.failedStores == 0, baseline.tierErrors == 0, baseline.throughput > 0
        else { return nil }
        return result.throughput / baseline.throughput
    }

    /// The result of `subject` at `tasks` tasks (the first concurrency when `tasks` is `nil`).
    public func result(_ subject: String, tasks: Int? = nil) -> SubjectResult? {
        results.first { $0.subject == subject && (tasks == nil || $0.tasks == tasks) }
    }
}
