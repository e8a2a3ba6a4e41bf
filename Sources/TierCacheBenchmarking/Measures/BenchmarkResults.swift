/// Everything a run measured, in run order: each subject at each concurrency, baselines
/// included, ready for ``report(title:)`` or `JSONEncoder`.
public struct BenchmarkResults: Sendable, Codable, Hashable {
    /// The workload, in words.
    public var workload: String
    /// The measured phase's length, in words (and how many rounds measured it).
    public var length: String
    /// The warm-up's length, in words.
    public var warmUp: String
    /// Active processors on the machine that ran it.
    public var processors: Int
    /// One result per subject and concurrency.
    public var results: [SubjectResult]

    /// `result`'s throughput over its baseline's at the same concurrency, in this run: the median
    /// of the rounds' ratios (``SubjectResult/roundRatios``), each round's throughput over the
    /// baseline's round beside it. `nil` without a baseline, or when either side failed, had
    /// stores fail or counted tier errors (a lookup a tier failed is a miss: it did not do the
    /// work). A result written before rounds were recorded is compared with its baseline's row.
    public func throughputRatio(of result: SubjectResult) -> Double? {
        guard let name = result.baseline, result.isComparable else { return nil }
        if let ratios = result.roundRatios { return Self.median(ratios) }
        guard let baseline = results.first(where: { $0.subject == name && $0.tasks == result.tasks && $0.isBaseline }),
            baseline.isComparable, baseline.throughput > 0
        else { return nil }
        return result.throughput / baseline.throughput
    }

    /// The middle value (the mean of the two middle ones for an even count); `nil` for none.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// The result of `subject` at `tasks` tasks (the first concurrency when `tasks` is `nil`).
    public func result(_ subject: String, tasks: Int? = nil) -> SubjectResult? {
        results.first { $0.subject == subject && (tasks == nil || $0.tasks == tasks) }
    }
}
