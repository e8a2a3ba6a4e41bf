import CacheSimulation
import Foundation
import Histogram
import TierCache

/// Runs a ``BenchmarkPlan`` against subjects, one at a time, each at every concurrency of the
/// plan, with each subject's baseline beside it.
///
/// ```swift
/// let plan = BenchmarkPlan(workload: .zipf(keys: 100_000), tasks: [1, 2, 4])
/// let results = try await BenchmarkRunner(plan: plan).run([
///     .memory(capacity: 16 << 20),
///     .memory(capacity: 16 << 20, policy: .s3fifo),
/// ])
/// print(results.report().tables[0].text)
/// ```
///
/// A subject that cannot be opened, whose tier throws during the run, or whose reads return a
/// value of another size than the key's (another key's value), is reported as failed
/// (``SubjectResult/failure``) and the run goes on with the next one. A `MemoryTier` running an
/// eviction policy of your own that breaks `EvictionPolicy`'s contract stops the process instead
/// (a precondition names the rule it broke), as it would in your app: run
/// `PolicyConformanceSuite` on the policy first.
public struct BenchmarkRunner: Sendable {
    /// The plan every subject runs.
    public let plan: BenchmarkPlan
    private let sequence: WorkloadRequests
    private let keys: [CacheKey]
    private let keyTable: KeyTable

    /// Checks the plan and generates its requests.
    public init(plan: BenchmarkPlan) throws(BenchmarkError) {
        try plan.validate()
        self.plan = plan
        self.sequence = try plan.workload.requests(length: plan.sequenceLength)
        self.keys = try sequence.keys()
        self.keyTable = KeyTable(keys)
    }

    /// Runs every subject at every concurrency; `progress` hears each result as it is measured
    /// (baselines included), so a long run shows figures as it goes. Subjects keep their files
    /// under `scratchDirectory` (by default the temporary directory), in a directory of the run's
    /// own that is deleted afterwards. A subject named as an earlier one is reported as
    /// `name (2)`, `name (3)` and so on.
    public func run(
        _ subjects: [BenchmarkSubject], scratchDirectory: URL? = nil,
        progress: (@Sendable (SubjectResult) -> Void)? = nil
    ) async -> BenchmarkResults {
        var results: [SubjectResult] = [] {
            didSet { if let last = results.last, results.count > oldValue.count { progress?(last) } }
        }
        let root = (scratchDirectory ?? FileManager.default.temporaryDirectory).appendingPathComponent(
            "tiercache-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var measuredBaselines = Set<String>()
        let subjects = Self.namedApart(subjects)
        // Each baseline's name in the report, by what it is (its name and exact capacity): two
        // capacities its name rounds alike (64 MiB and 64 MiB less a page) are two baselines,
        // the second named `name (2)`, so that each subject's ratio is to its own.
        var baselineNames: [String: String] = [:]
        for subject in subjects {
            for tasks in plan.tasks {
                // A cancelled run opens, prefills and measures nothing more: each subject left says so.
                guard !Task.isCancelled else {
                    results.append(
                        .failed(subject.name, tasks: tasks, .subjectFailed(subject: subject.name, reason: "cancelled")))
                    continue
                }
                let scratch = BenchmarkScratch(directory: root.appendingPathComponent("\(results.count)"))
                let driver: SubjectDriver
                do {
                    try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
                    driver = try await subject.open(scratch)
                } catch {
                    await scratch.tearDown()
                    results.append(
                        .failed(
                            subject.name, tasks: tasks,
                            BenchmarkError.subjectUnavailable(subject: subject.name, reason: "\(error)")))
                    continue
                }
                var baselineName: String?
                var baseline: MeasuredSide?
                // Why the baseline beside this subject gave no ratio, when it failed.
                var baselineFailure: String?
                // The baseline's row: the first subject it stands beside gives it; a later
                // subject's rounds with it give that subject's ratio only.
                var reportsBaseline = false
                if plan.baselines, !subject.isBaseline {
                    do {
                        if let found = try await Self.baseline(of: subject, driver) {
                            let identity = found.identity
                            let name =
                                baselineNames[identity]
                                ?? DistinctNames.unused(
                                    found.subject.name, taken: Set(baselineNames.values).union(subjects.map(\.name)))
                            baselineNames[identity] = name
                            baselineName = name
                            reportsBaseline = measuredBaselines.insert("\(identity)/\(tasks)").inserted
                            var named = found.subject
                            named.name = name
                            switch await open(named, tasks: tasks, root: root, index: results.count) {
                            case .opened(let side): baseline = side
                            case .unavailable(let failed):
                                if reportsBaseline { results.append(failed) }
                                baselineFailure = failed.failure
                            }
                        }
                    } catch {
                        // The report says why the subject has no ratio, in the baseline's row.
                        let name = "baseline of \(subject.name)"
                        baselineName = name
                        let failed = SubjectResult.failed(name, isBaseline: true, tasks: tasks, error)
                        results.append(failed)
                        // And in the subject's: without it, its row said "ok" with no ratio.
                        baselineFailure = failed.failure
                    }
                }
                var measured = await prepare(
                    MeasuredSide(driver: driver, subject: subject, scratch: scratch, tasks: tasks))
                if let side = baseline.take() { baseline = await prepare(side) }
                // Every round of the baseline, even past a subject that failed (which measures no
                // more): its row is complete, whichever subject gives it.
                for round in 0..<plan.rounds {
                    // Alternately first and second (the last round's baseline first), so that a
                    // drift of the machine's pace falls on both sides alike.
                    let baselineFirst = (plan.rounds - 1 - round) % 2 == 0
                    if baselineFirst, let side = baseline.take() { baseline = await measureRound(side) }
                    measured = await measureRound(measured)
                    if !baselineFirst, let side = baseline.take() { baseline = await measureRound(side) }
                }
                var pairedRatios: [Double] = []
                if let side = baseline {
                    let result = await result(of: side)
                    if result.isComparable, side.roundThroughputs.count == measured.roundThroughputs.count {
                        pairedRatios = zip(measured.roundThroughputs, side.roundThroughputs).compactMap {
                            $1 > 0 ? $0 / $1 : nil
                        }
                    } else if !result.isComparable {
                        baselineFailure = result.status
                    }
                    if reportsBaseline { results.append(result) }
                    await side.scratch.tearDown()
                    try? FileManager.default.removeItem(at: side.scratch.directory)
                }
                var result = await result(of: measured)
                result.baseline = baselineName
                result.roundRatios = baselineName == nil ? nil : pairedRatios
                // Said in the subject's own row too: the baseline's row, another subject's, may
                // say "ok".
                result.baselineFailure = baselineFailure
                results.append(result)
                await scratch.tearDown()
                try? FileManager.default.removeItem(at: scratch.directory)
            }
        }
        return BenchmarkResults(
            workload: plan.workload.description,
            length: plan.length.description + (plan.rounds > 1 ? " in each of \(plan.rounds) rounds" : ""),
            warmUp: plan.warmUp.description, processors: ProcessInfo.processInfo.activeProcessorCount,
            results: results)
    }

    /// A baseline opened, or the row saying why it could not be.
    private enum BaselineOpening {
        case opened(MeasuredSide)
        case unavailable(SubjectResult)
    }

    /// Opens a baseline in a scratch directory of its own.
    private func open(
        _ subject: BenchmarkSubject, tasks: Int, root: URL, index: Int
    ) async -> BaselineOpening {
        let scratch = BenchmarkScratch(directory: root.appendingPathComponent("\(index)-baseline"))
        do {
            try FileManager.default.createDirectory(at: scratch.directory, withIntermediateDirectories: true)
            let driver = try await subject.open(scratch)
            return .opened(MeasuredSide(driver: driver, subject: subject, scratch: scratch, tasks: tasks))
        } catch {
            await scratch.tearDown()
            try? FileManager.default.removeItem(at: scratch.directory)
            return .unavailable(
                .failed(
                    subject.name, isBaseline: subject.isBaseline, tasks: tasks,
                    BenchmarkError.subjectUnavailable(subject: subject.name, reason: "\(error)")))
        }
    }

    /// `subjects`, each named as no other is: results, charts and ratios find a subject by its
    /// name, so a second `memory-lru` (a user's LRU type is named after the built-in's) becomes
    /// `memory-lru (2)` rather than sharing the first one's rows.
    static func namedApart(_ subjects: [BenchmarkSubject]) -> [BenchmarkSubject] {
        zip(subjects, DistinctNames.apart(subjects.map(\.name))).map { subject, name in
            var renamed = subject
            renamed.name = name
            return renamed
        }
    }

    /// The baseline subject `subject` is compared with, at the capacity of the tier it stands for,
    /// and what tells it apart from other subjects' baselines of the same name (their capacities,
    /// and a minimal LRU's per-entry limit): subjects with equal identities share a name and a
    /// row (each measures rounds of its own beside it).
    private static func baseline(
        of subject: BenchmarkSubject, _ driver: SubjectDriver
    ) async throws(BenchmarkError) -> (subject: BenchmarkSubject, identity: String)? {
        let kind: BenchmarkSubject.Baseline =
            switch subject.baseline {
            case .automatic: driver.medium == .memory ? .minimalLRU : .rawLMDBZstd
            default: subject.baseline
            }
        let tiers = driver.tiers
        switch kind {
        case .minimalLRU:
            guard let tier = tiers.first(where: { $0.medium == .memory }) ?? tiers.first else { return nil }
            // The subject's own per-entry limit too: with 5% in the baseline and a larger share
            // in the subject, the baseline refused what the subject stored, and did less work.
            let usage = try await usage(of: tier, standingFor: subject)
            let baseline = BenchmarkSubject.minimalLRU(capacity: usage.capacity, maxEntryBytes: usage.maxEntryBytes)
            return (baseline, "\(baseline.name)/\(usage.capacity)/\(usage.maxEntryBytes)")
        case .rawLMDBZstd, .rawSQLiteZlib:
            guard let tier = tiers.last(where: { $0.medium != .memory }) ?? tiers.last else { return nil }
            let usage = try await usage(of: tier, standingFor: subject)
            let baseline =
                if case .rawSQLiteZlib(let durability) = kind {
                    BenchmarkSubject.rawSQLiteZlib(
                        capacity: usage.capacity, maxEntryBytes: usage.maxEntryBytes, durability: durability)
                } else {
                    BenchmarkSubject.rawLMDBZstd(capacity: usage.capacity, maxEntryBytes: usage.maxEntryBytes)
                }
            return (baseline, "\(baseline.name)/\(usage.capacity)/\(usage.maxEntryBytes)")
        case .automatic, .none:
            return nil
        }
    }

    /// The usage of the tier a baseline of `subject` stands for (the baseline takes its capacity),
    /// or an error saying why there is none.
    private static func usage(
        of tier: any CacheTier, standingFor subject: BenchmarkSubject
    ) async throws(BenchmarkError) -> TierUsage {
        do {
            return try await tier.usage()
        } catch {
            throw .subjectUnavailable(
                subject: "baseline of \(subject.name)",
                reason: "its tier \(tier.name) did not report its capacity, which the baseline takes: \(error)")
        }
    }

    /// The window of the hit-ratio timeline, in requests per task.
    private func timelineWindow(tasks: Int) -> Int {
        switch plan.length {
        case .requests(let count): max(1, count / tasks / plan.timelinePoints)
        case .duration: plan.timelineWindow
        }
    }

    private func loops(_ side: MeasuredSide, measured: Bool) -> [TaskLoop] {
        (0..<side.tasks).map {
            TaskLoop(
                driver: side.driver, sequence: sequence, keys: keyTable, task: $0, tasks: side.tasks,
                measured: measured, sampling: plan.latencySampling, window: timelineWindow(tasks: side.tasks),
                stop: side.stop)
        }
    }

    /// Fills `side` (with ``BenchmarkPlan/prefill``) and warms it up; then notes its tiers'
    /// counters, from which its measured rounds count.
    private func prepare(_ side: MeasuredSide) async -> MeasuredSide {
        var side = side
        if plan.prefill {
            do {
                try await side.driver.storeEveryKey(of: sequence, keys: keys)
            } catch {
                side.preparationFailure = "\(error)"
                side.stop.raise()  // nothing to measure on a subject that cannot be filled
            }
        }
        let warmUp = await Self.phase(loops(side, measured: false), firstStrides: side.strides, plan.warmUp)
        side.warmUpRequests = warmUp.reduce(0) { $0 + $1.requests }
        side.preparationFailure = side.preparationFailure ?? warmUp.lazy.compactMap(\.failure).first
        side.strides = warmUp.map(\.nextStride)
        side.before = await side.driver.statistics()
        return side
    }

    /// Measures one round of `side`: the plan's measured phase, from where its last round ended.
    private func measureRound(_ side: MeasuredSide) async -> MeasuredSide {
        guard !side.hasFailed else { return side }
        var side = side
        let clock = ContinuousClock()
        let start = clock.now
        let round = await Self.phase(loops(side, measured: true), firstStrides: side.strides, plan.length)
        side.add(round: round, seconds: (clock.now - start).inSeconds)
        return side
    }

    /// What `side` measured over its rounds.
    private func result(of side: MeasuredSide) async -> SubjectResult {
        let after = await side.driver.statistics()
        var result = SubjectResult(
            subject: side.subject.name, isBaseline: side.subject.isBaseline, baseline: nil, tasks: side.tasks,
            failure: side.failure.map {
                BenchmarkError.subjectFailed(subject: side.subject.name, reason: $0).description
            },
            warmUpRequests: side.warmUpRequests,
            reads: 0, writes: 0, deletes: 0, hits: 0, refusedStores: 0, failedStores: 0, readBytes: 0, hitBytes: 0,
            seconds: side.seconds,
            latency: LatencySummary(count: 0, meanNanoseconds: 0, percentiles: [:], distribution: []),
            hitRatioTimeline: [], tiers: TierResult.deltas(before: side.before, after: after),
            residentBytes: ResourceUsage.residentBytes(),
            diskBytes: ResourceUsage.diskBytes(under: side.scratch.directory))
        var histogram = TaskTally.emptyHistogram()
        for tally in side.tallies {
            result.reads += tally.reads
            result.writes += tally.writes
            result.deletes += tally.deletes
            result.hits += tally.hits
            result.refusedStores += tally.refusedStores
            result.failedStores += tally.failedStores
            result.readBytes &+= tally.readBytes
            result.hitBytes &+= tally.hitBytes
            if let latency = tally.latency { histogram.add(latency) }
        }
        result.latency = LatencySummary(histogram)
        result.roundThroughputs = side.roundThroughputs
        result.hitRatioTimeline = Self.timeline(side.tallies, points: plan.timelinePoints)
        return result
    }

    /// Runs one phase: each loop from its first stride, the phase's share of requests each, or
    /// for its duration.
    private static func phase(_ loops: [TaskLoop], firstStrides: [Int], _ length: RunLength) async -> [TaskTally] {
        let duration: Duration?
        var limits: [Int?] = Array(repeating: nil, count: loops.count)
        switch length {
        case .requests(let count):
            duration = nil
            for task in loops.indices { limits[task] = count / loops.count + (task < count % loops.count ? 1 : 0) }
        case .duration(let length):
            duration = length
        }
        if case .requests(0) = length { return firstStrides.map { TaskTally(nextStride: $0) } }
        return await withTaskGroup(of: (Int, TaskTally).self) { group in
            for (task, loop) in loops.enumerated() {
                let first = firstStrides[task]
                let limit = limits[task]
                group.addTask { (task, await loop.run(firstStride: first, limit: limit, duration: duration)) }
            }
            var tallies = Array(repeating: TaskTally(), count: loops.count)
            for await (task, tally) in group { tallies[task] = tally }
            return tallies
        }
    }

    /// The hit ratio of each window, summed over the tasks' windows of the same index, at the
    /// requests the tasks had done by its end (each window counts its own: a round's last one is
    /// partial, and the next round's follow it). A run bounded by duration has a window per
    /// ``BenchmarkPlan/timelineWindow`` requests, as many as its length brings (a ten-minute run of
    /// a memory tier, hundreds of thousands: tens of megabytes of chart, drawn point by point):
    /// past twice `points`, neighbouring windows are merged, so that about `points` remain.
    private static func timeline(_ tallies: [TaskTally], points: Int) -> [SubjectResult.TimelinePoint] {
        let count = tallies.map(\.windows.count).max() ?? 0
        let merged = count > 2 * points ? (count + points - 1) / points : 1
        // Each task's requests by the end of each of its windows.
        let done = tallies.map { tally in
            var sum = 0
            return tally.windows.map { window in
                sum += window.requests
                return sum
            }
        }
        return stride(from: 0, to: count, by: merged).compactMap { first in
            let indices = first..<min(first + merged, count)
            var reads = 0, hits = 0
            for tally in tallies {
                for index in indices where index < tally.windows.count {
                    reads += tally.windows[index].reads
                    hits += tally.windows[index].hits
                }
            }
            guard reads > 0 else { return nil }
            let requests = done.reduce(0) { sum, task in
                task.isEmpty ? sum : sum + task[min(indices.upperBound, task.count) - 1]
            }
            return SubjectResult.TimelinePoint(requests: requests, hitRatio: Double(hits) / Double(reads))
        }
    }
}

extension SubjectDriver {
    /// The tiers the subject is made of, top to bottom.
    var tiers: [any CacheTier] {
        switch self {
        case .tier(let tier): [tier]
        case .localTier(let tier): [tier]
        case .tiered(let cache, _): cache.tiers
        }
    }
}

extension SubjectResult {
    static func failed(
        _ subject: String, isBaseline: Bool = false, tasks: Int, _ error: BenchmarkError
    ) -> SubjectResult {
        SubjectResult(
            subject: subject, isBaseline: isBaseline, baseline: nil, tasks: tasks, failure: error.description,
            warmUpRequests: 0, reads: 0, writes: 0, deletes: 0, hits: 0, refusedStores: 0, failedStores: 0,
            readBytes: 0, hitBytes: 0, seconds: 0,
            latency: LatencySummary(count: 0, meanNanoseconds: 0, percentiles: [:], distribution: []),
            hitRatioTimeline: [], tiers: [], residentBytes: nil, diskBytes: nil)
    }
}

extension LatencySummary {
    /// The percentiles the CDF chart draws: dense in the tail, where latency lives.
    static let distributionPercentiles: [Double] = [
        0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 100,
    ]

    init(_ histogram: Histogram<UInt64>) {
        let count = Int(histogram.totalCount)
        self.init(
            count: count, meanNanoseconds: count > 0 ? histogram.mean : 0,
            percentiles: count > 0
                ? Dictionary(
                    uniqueKeysWithValues: Self.reported.map { ($0.name, histogram.valueAtPercentile($0.percentile)) })
                : [:],
            distribution: count > 0
                ? Self.distributionPercentiles.map {
                    Point(percentile: $0, nanoseconds: histogram.valueAtPercentile($0))
                }
                : [])
    }
}

extension TierResult {
    /// Each tier's counters after the phase minus before it; usage as it stands after.
    static func deltas(
        before: [(tier: String, statistics: TierStatistics)], after: [(tier: String, statistics: TierStatistics)]
    ) -> [TierResult] {
        after.enumerated().map { index, tier in
            let old = index < before.count ? before[index].statistics : TierStatistics()
            let new = tier.statistics
            func refused(_ s: TierStatistics) -> Int {
                s.refusedTooLarge + s.refusedByPolicy + s.refusedExpired + s.refusedOutOfSpace
                    + s.refusedNotAdmitted + s.refusedWhileSuspended
            }
            return TierResult(
                name: tier.tier, hits: new.hits - old.hits, misses: new.misses - old.misses,
                stores: new.stores - old.stores, evictions: new.evictions - old.evictions,
                refused: refused(new) - refused(old), errors: new.errors - old.errors,
                bytesInUse: new.usage?.bytes, entries: new.usage?.entries)
        }
    }
}

extension Duration {
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
