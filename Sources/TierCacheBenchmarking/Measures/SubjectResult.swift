/// What one subject did at one concurrency: throughput, latency, hit ratios, each tier's
/// counters, and the memory and disk it held afterwards.
public struct SubjectResult: Sendable, Codable, Hashable {
    /// The subject's name.
    public var subject: String
    /// Whether the subject is a baseline.
    public var isBaseline: Bool
    /// The baseline it is compared with in this run, if any.
    public var baseline: String?
    /// Concurrent tasks.
    public var tasks: Int
    /// Why the subject failed (could not be opened, or a tier threw mid-run); its other figures
    /// then cover what ran before the failure.
    public var failure: String?
    /// Requests in the warm-up phase (not measured).
    public var warmUpRequests: Int
    /// Measured reads.
    public var reads: Int
    /// Measured writes.
    public var writes: Int
    /// Measured deletes.
    public var deletes: Int
    /// Reads that found a value.
    public var hits: Int
    /// Measured stores (writes, and stores after read misses) that a tier refused: too large, out
    /// of space, not admitted. Counted from what the subject answered, so a tier of your own is
    /// counted whether or not its statistics count refusals.
    public var refusedStores: Int
    /// Measured stores a tier of the subject failed without throwing (a `TieredCache` counts its
    /// tiers' errors and goes on). A subject with failed stores gets no throughput ratio: it did
    /// not do the work its baseline did.
    public var failedStores: Int
    /// The bytes of the values read (by the workload's sizes).
    public var readBytes: UInt64
    /// The bytes of the values found.
    public var hitBytes: UInt64
    /// The measured phase's wall-clock time.
    public var seconds: Double
    /// Latency percentiles and the distribution's shape.
    public var latency: LatencySummary
    /// The hit ratio of successive windows of the measured phase.
    public var hitRatioTimeline: [TimelinePoint]
    /// Each tier's counters over the measured phase (statistics after it minus before it).
    public var tiers: [TierResult]
    /// The process's resident memory after the run, with the subject still open (bytes): its
    /// baseline was open beside it through the rounds (a baseline's figure is taken with its
    /// subject still open), so the figure counts what the allocator kept of the other's. On
    /// Linux the current figure; elsewhere the process's peak so far (`ru_maxrss`, the one figure
    /// every platform gives), so a subject measured after a larger one shows that one's. The whole
    /// process's, not the subject's alone: the run's own requests, and on Linux memory that
    /// subjects measured earlier freed and the allocator kept, count too; compare subjects run
    /// in the same order.
    public var residentBytes: Int?
    /// What the subject's scratch directory held on disk after the run (bytes).
    public var diskBytes: Int?
    /// Each measured round's throughput (requests per second), in order
    /// (``BenchmarkPlan/rounds``); `nil` in results written before rounds were recorded.
    public var roundThroughputs: [Double]? = nil
    /// For a subject with a baseline: each round's throughput over the baseline's round beside
    /// it, in order; empty when the baseline could not be measured cleanly (it failed, had stores
    /// fail or counted tier errors). ``BenchmarkResults/throughputRatio(of:)`` is their median.
    /// `nil` without a baseline, and in results written before rounds were recorded.
    public var roundRatios: [Double]? = nil
    /// Why the baseline beside the subject gave no ratio, when it failed (could not be opened,
    /// failed a round, had stores fail or counted tier errors): said in the subject's status too,
    /// since the baseline's row may be another subject's, which says "ok".
    public var baselineFailure: String? = nil

    /// Every measured request.
    public var requests: Int { reads + writes + deletes }
    /// Requests per second.
    public var throughput: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    /// Hits over reads.
    public var hitRatio: Double { reads > 0 ? Double(hits) / Double(reads) : 0 }
    /// Bytes found over bytes read.
    public var byteHitRatio: Double { readBytes > 0 ? Double(hitBytes) / Double(readBytes) : 0 }
    /// The operations the subject's tiers counted as failed in the measured phase: a tiered
    /// cache answers a lookup a tier failed as a miss, and goes on past a store a tier failed, so
    /// these are the failures the requests' answers do not show. A subject with any gets no
    /// throughput ratio.
    public var tierErrors: Int { tiers.reduce(0) { $0 &+ $1.errors } }
    /// Whether the result's throughput can be compared with another's: it did not fail, had no
    /// stores fail and counted no tier errors (a lookup a tier failed is a miss: it did not do
    /// the work).
    var isComparable: Bool { failure == nil && failedStores == 0 && tierErrors == 0 }
    /// What the report's status column says: the failure, else the stores failed, the tiers'
    /// errors, the stores refused and the baseline's failure, else "ok".
    public var status: String {
        if let failure { return failure }
        var notes: [String] = []
        if failedStores > 0 { notes.append("\(failedStores) stores failed") }
        if tierErrors > 0 { notes.append("\(tierErrors) tier errors") }
        if refusedStores > 0 { notes.append("\(refusedStores) stores refused") }
        if let baselineFailure { notes.append("no ratio: its baseline failed (\(baselineFailure))") }
        return notes.isEmpty ? "ok" : notes.joined(separator: ", ")
    }

    /// One point of the hit ratio over time.
    public struct TimelinePoint: Sendable, Codable, Hashable {
        /// Measured requests done at the window's end (all tasks).
        public var requests: Int
        /// The window's hit ratio.
        public var hitRatio: Double
    }
}

extension SubjectResult {
    /// Decodes a result. `refusedStores` and `failedStores`, which results written before they
    /// were counted lack, read as 0, and the rounds' figures as `nil`, so that earlier runs' JSON
    /// still loads beside new ones.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(String.self, forKey: .subject)
        isBaseline = try container.decode(Bool.self, forKey: .isBaseline)
        baseline = try container.decodeIfPresent(String.self, forKey: .baseline)
        tasks = try container.decode(Int.self, forKey: .tasks)
        failure = try container.decodeIfPresent(String.self, forKey: .failure)
        warmUpRequests = try container.decode(Int.self, forKey: .warmUpRequests)
        reads = try container.decode(Int.self, forKey: .reads)
        writes = try container.decode(Int.self, forKey: .writes)
        deletes = try container.decode(Int.self, forKey: .deletes)
        hits = try container.decode(Int.self, forKey: .hits)
        refusedStores = try container.decodeIfPresent(Int.self, forKey: .refusedStores) ?? 0
        failedStores = try container.decodeIfPresent(Int.self, forKey: .failedStores) ?? 0
        readBytes = try container.decode(UInt64.self, forKey: .readBytes)
        hitBytes = try container.decode(UInt64.self, forKey: .hitBytes)
        seconds = try container.decode(Double.self, forKey: .seconds)
        latency = try container.decode(LatencySummary.self, forKey: .latency)
        hitRatioTimeline = try container.decode([TimelinePoint].self, forKey: .hitRatioTimeline)
        tiers = try container.decode([TierResult].self, forKey: .tiers)
        residentBytes = try container.decodeIfPresent(Int.self, forKey: .residentBytes)
        diskBytes = try container.decodeIfPresent(Int.self, forKey: .diskBytes)
        roundThroughputs = try container.decodeIfPresent([Double].self, forKey: .roundThroughputs)
        roundRatios = try container.decodeIfPresent([Double].self, forKey: .roundRatios)
        baselineFailure = try container.decodeIfPresent(String.self, forKey: .baselineFailure)
    }
}

/// Latency of one subject's measured requests, from an HDR histogram (three significant digits).
public struct LatencySummary: Sendable, Codable, Hashable {
    /// Recorded requests: 1 in `BenchmarkPlan.latencySampling` of the measured phase's (1 in 8 by
    /// default), not all of them.
    public var count: Int
    /// The mean, in nanoseconds.
    public var meanNanoseconds: Double
    /// Percentiles (p50, p90, p99, p99.9, max) in nanoseconds, by name.
    public var percentiles: [String: UInt64]
    /// The cumulative distribution: (percentile, nanoseconds) pairs, for the CDF chart.
    public var distribution: [Point]

    /// A point of the cumulative distribution.
    public struct Point: Sendable, Codable, Hashable {
        /// The share of requests at or below ``nanoseconds``, in percent.
        public var percentile: Double
        /// The latency at ``percentile``.
        public var nanoseconds: UInt64
    }

    /// The percentiles every report prints.
    public static let reported: [(name: String, percentile: Double)] = [
        ("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9), ("max", 100),
    ]
}

/// One tier's counters over the measured phase.
public struct TierResult: Sendable, Codable, Hashable {
    /// The tier's name.
    public var name: String
    /// Lookups that found an entry.
    public var hits: Int
    /// Lookups that found none.
    public var misses: Int
    /// Entries stored.
    public var stores: Int
    /// Entries evicted to make room.
    public var evictions: Int
    /// Entries refused: too large, by policy, expired or out of space.
    public var refused: Int
    /// Operations that failed (counted by the tier or by a tiered cache).
    public var errors: Int
    /// Bytes held after the run, when the tier reports them.
    public var bytesInUse: Int?
    /// Entries held after the run, when the tier reports them.
    public var entries: Int?
}
