import CacheSimulation
import Foundation
import Synchronization
import Testing
import TierCache
import TierCacheEviction

@testable import TierCacheBenchmarking

/// The runner's figures agree with what was done: the histogram holds every measured request,
/// the hit counts match the tier's own counters, the warm-up stays out of both, and a subject
/// that fails is reported while the others run.
@Suite struct RunnerTests {
    private static let workload = Workload(
        .synthetic(keys: 2_000, distribution: .zipf(skew: 0.9), sizes: .uniform(64...512)),
        mix: OperationMix(reads: 0.8, writes: 0.15, deletes: 0.05))

    @Test func theHistogramAndTheCountersAgreeWithWhatWasDone() async throws {
        let plan = BenchmarkPlan(
            workload: Self.workload, length: .requests(10_001), warmUp: .requests(3_000), tasks: [1, 3])
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)])
        for tasks in [1, 3] {
            let result = try #require(results.results.first { $0.subject == "memory-lru" && $0.tasks == tasks })
            #expect(result.failure == nil)
            // Every request of the three rounds counted; one in eight timed (each task's first,
            // ninth, … in each round).
            let shares = (0..<tasks).map { 10_001 / tasks + ($0 < 10_001 % tasks ? 1 : 0) }
            #expect(result.requests == 3 * 10_001)
            #expect(result.roundThroughputs?.count == 3)
            #expect(result.latency.count == 3 * shares.reduce(0) { $0 + ($1 + 7) / 8 })
            #expect(result.warmUpRequests == 3_000)
            // The sequence's own shares, over the measured stretch, within a few standard deviations.
            #expect(abs(Double(result.reads) / (3 * 10_001) - 0.8) < 0.03)
            let tier = try #require(result.tiers.first)
            #expect(tier.hits == result.hits, "the tier's hits over the measured phase are the runner's")
            #expect(tier.hits + tier.misses == result.reads)
            #expect(result.hits > 0 && result.hitRatio < 1)
            let percentiles = result.latency.percentiles
            let p50 = try #require(percentiles["p50"])
            let p99 = try #require(percentiles["p99"])
            let maximum = try #require(percentiles["max"])
            #expect(p50 <= p99 && p99 <= maximum)
            #expect(result.latency.distribution.map(\.percentile) == LatencySummary.distributionPercentiles)
            #expect(
                zip(result.latency.distribution, result.latency.distribution.dropFirst()).allSatisfy {
                    $0.nanoseconds <= $1.nanoseconds
                })
            // About 50 points per round, neighbours merged back to about 50 in all.
            let timelineReads = result.hitRatioTimeline.count
            #expect(timelineReads >= 35 && timelineReads <= 60, "about 50 points: \(timelineReads)")
            // The last point closes the run (or the last window that had a read, a window earlier).
            let end = try #require(result.hitRatioTimeline.last?.requests)
            #expect(end <= 3 * 10_001 && end > 3 * 10_001 - 2 * 3 * 10_001 / 50)
        }
        // The baseline ran beside it, at each concurrency, on the same requests.
        let baseline = try #require(results.result("minimal LRU 1 MiB", tasks: 1))
        #expect(baseline.isBaseline && baseline.requests == 3 * 10_001)
        let subject = try #require(results.result("memory-lru", tasks: 1))
        #expect(subject.baseline == "minimal LRU 1 MiB")
        #expect(results.throughputRatio(of: subject).map { $0 > 0 } == true)
    }

    /// Each subject's rounds alternate with its baseline's, each pair gives a ratio, and the
    /// subject's ratio is their median: a second subject beside the same baseline gets rounds of
    /// its own with it, not the first one's figure, and no second baseline row.
    @Test func theRatioIsTheMedianOfEachRoundsPair() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 500, sizes: .fixed(64)), length: .requests(2_000), tasks: [1], rounds: 5)
        let results = try await BenchmarkRunner(plan: plan).run([
            .memory(capacity: 1 << 20), .memory(capacity: 1 << 20, policy: .sieve),
        ])
        #expect(results.results.map(\.subject) == ["minimal LRU 1 MiB", "memory-lru", "memory-sieve"])
        #expect(results.length == "2000 requests in each of 5 rounds")
        let baseline = try #require(results.result("minimal LRU 1 MiB"))
        #expect(baseline.roundThroughputs?.count == 5 && baseline.roundRatios == nil)
        for name in ["memory-lru", "memory-sieve"] {
            let subject = try #require(results.result(name))
            #expect(subject.requests == 5 * 2_000)
            let throughputs = try #require(subject.roundThroughputs)
            let ratios = try #require(subject.roundRatios)
            #expect(throughputs.count == 5 && ratios.count == 5 && throughputs.allSatisfy { $0 > 0 })
            #expect(results.throughputRatio(of: subject) == ratios.sorted()[2])
        }
        // The first subject's ratios are to the baseline row's rounds.
        let first = try #require(results.result("memory-lru"))
        let baselineRounds = try #require(baseline.roundThroughputs)
        let firstRounds = try #require(first.roundThroughputs)
        #expect(first.roundRatios == zip(firstRounds, baselineRounds).map { $0 / $1 })
        // The report gives the median and the rounds' range.
        let row = try #require(results.report().tables[0].rows.first { $0[0] == "memory-lru" })
        #expect(row[3].contains("× (") && row[3].contains("–"))
    }

    /// A subject that fails while being filled measures no round; its baseline still measures
    /// every one: its row (the one every subject sharing it shows) was empty and said "ok".
    @Test func aBaselineMeasuresEveryRoundPastASubjectThatFailed() async throws {
        var plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(1_000), tasks: [1], rounds: 2)
        plan.prefill = true
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("breaks", baseline: .minimalLRU) { _ in try FailingTier(failingAfter: 0) },
            .memory(capacity: 1 << 20),
        ])
        #expect(results.results.map(\.subject) == ["minimal LRU 1 MiB", "breaks", "memory-lru"])
        let baseline = try #require(results.result("minimal LRU 1 MiB"))
        #expect(baseline.failure == nil && baseline.requests == 2 * 1_000 && baseline.roundThroughputs?.count == 2)
        #expect(try #require(results.result("breaks")).failure?.contains("disk on fire") == true)
        #expect(results.throughputRatio(of: try #require(results.result("memory-lru"))) != nil)
    }

    /// A later subject's own rounds with a shared baseline that fails: no row of its own (the
    /// first subject's says "ok"), so the subject's status says why it has no ratio.
    @Test func aLaterSubjectsFailedBaselineIsInItsStatus() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(500), tasks: [1], rounds: 1)
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("first", baseline: .rawLMDBZstd) { _ in try MemoryTier(capacity: 1 << 20) },
            .localTier("second", baseline: .rawLMDBZstd) { scratch in
                // A file where its baseline's directory goes: that baseline cannot be opened.
                try Data().write(to: URL(fileURLWithPath: scratch.directory.path + "-baseline"))
                return try MemoryTier(capacity: 1 << 20)
            },
        ])
        #expect(results.results.filter(\.isBaseline).count == 1)
        let first = try #require(results.result("first"))
        #expect(results.throughputRatio(of: first) != nil && first.baselineFailure == nil && first.status == "ok")
        let second = try #require(results.result("second"))
        #expect(results.throughputRatio(of: second) == nil)
        #expect(second.failure == nil && second.baselineFailure != nil)
        #expect(second.status.hasPrefix("no ratio: its baseline failed"), "\(second.status)")
    }

    /// Each round ends with a partial window; the timeline's points are at the requests done by
    /// their windows' end (they assumed full windows, shifting every point after the first round).
    @Test func theTimelineCountsEachWindowsOwnRequests() async throws {
        var plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(5), tasks: [1], baselines: false,
            rounds: 2)
        plan.timelinePoints = 2
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)])
        // Windows of 2, 2 and 1 requests a round, merged three at a time.
        #expect(try #require(results.result("memory-lru")).hitRatioTimeline.map(\.requests) == [5, 10])
    }

    @Test func theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        #expect(BenchmarkResults.median([]) == nil)
        #expect(BenchmarkResults.median([3]) == 3)
        #expect(BenchmarkResults.median([4, 1, 3, 2]) == 2.5)
        #expect(BenchmarkResults.median([0.9, 1.3, 0.2]) == 0.9)
    }

    /// A run's JSON written before rounds were recorded (no `roundThroughputs`, no
    /// `roundRatios`) still loads, and its ratio is to the baseline's row, as it was computed then.
    @Test func resultsWrittenBeforeRoundsStillGiveTheirRatio() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(1_000), tasks: [1], rounds: 1)
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)])
        var json = try #require(
            JSONSerialization.jsonObject(with: JSONEncoder().encode(results)) as? [String: Any])
        var rows = try #require(json["results"] as? [[String: Any]])
        #expect(rows.allSatisfy { $0["roundThroughputs"] != nil })
        for index in rows.indices {
            rows[index]["roundThroughputs"] = nil
            rows[index]["roundRatios"] = nil
        }
        json["results"] = rows
        let old = try JSONDecoder().decode(BenchmarkResults.self, from: JSONSerialization.data(withJSONObject: json))
        let subject = try #require(old.result("memory-lru"))
        let baseline = try #require(old.result("minimal LRU 1 MiB"))
        #expect(subject.roundRatios == nil)
        #expect(old.throughputRatio(of: subject) == subject.throughput / baseline.throughput)
    }

    /// A latency past a minute (a stalled remote tier) is counted, and is the maximum.
    @Test func latenciesPastAMinuteAreKept() throws {
        var histogram = TaskTally.emptyHistogram()
        let recorded = [histogram.record(1_000), histogram.record(90_000_000_000)]
        #expect(recorded == [true, true])
        var merged = TaskTally.emptyHistogram()
        merged.add(histogram)
        #expect(merged.totalCount == 2 && merged.max >= 90_000_000_000)
    }

    /// A memory tier that admits entries up to half its capacity gets a baseline that admits
    /// them too: with the 5% rule in the baseline alone, it refused every store and did less.
    @Test func theMinimalLRUTakesTheSubjectsPerEntryLimit() async throws {
        let workload = Workload(
            .synthetic(keys: 20, distribution: .zipf(skew: 0.9), sizes: .uniform(100_000...120_000)), mix: .readThrough)
        let plan = BenchmarkPlan(workload: workload, length: .requests(2_000), tasks: [1])
        // A subject of the same capacity with the default 5% first: its baseline is not reused.
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("default entries", baseline: .minimalLRU) { _ in try MemoryTier(capacity: 1 << 20) },
            .localTier("large entries", baseline: .minimalLRU) { _ in
                try MemoryTier(.init(capacity: 1 << 20, maxEntryFraction: 0.5))
            },
        ])
        let subject = try #require(results.result("large entries"))
        let baselineName = try #require(subject.baseline)
        #expect(baselineName != results.result("default entries")?.baseline)
        let baseline = try #require(results.result(baselineName))
        #expect(subject.refusedStores == 0 && subject.hits > 0)
        #expect(baseline.refusedStores == 0, "the baseline refused \(baseline.refusedStores) stores")
        #expect(baseline.hits > 0)
    }

    /// The disk baselines refuse what their subject refuses: a compressed record above the
    /// tier's per-entry limit (they took entries up to their whole capacity, and did more work).
    @Test(arguments: [BenchmarkSubject.lmdb(capacity: 8 << 20), .sqlite(capacity: 8 << 20)])
    func theDiskBaselinesTakeTheSubjectsPerEntryLimit(subject: BenchmarkSubject) async throws {
        // 5-7 MB of JSON-like text, under the capacity, compresses to more than 5% of it.
        let workload = Workload(
            .synthetic(keys: 5, distribution: .zipf(skew: 0.9), sizes: .uniform(5_000_000...7_000_000)),
            mix: .readThrough)
        let plan = BenchmarkPlan(workload: workload, length: .requests(40), tasks: [1], rounds: 1)
        let results = try await BenchmarkRunner(plan: plan).run([subject])
        let measured = try #require(results.result(subject.name))
        let baseline = try #require(results.results.first { $0.isBaseline })
        #expect(measured.refusedStores > 0 && measured.hits == 0, "\(measured.status)")
        #expect(baseline.refusedStores == measured.refusedStores, "\(baseline.status)")
        #expect(baseline.hits == 0)
    }

    /// A disk baseline evicts nothing: once the workload outgrows the capacity it fails, saying
    /// so, and its subject gets no ratio (it refused stores, or kept what its subject evicted,
    /// and the two no longer did the same work).
    @Test(arguments: [BenchmarkSubject.Baseline.rawLMDBZstd, .rawSQLiteZlib(.normal)])
    func aDiskBaselineThatOutgrowsItsCapacityGivesNoRatio(baseline kind: BenchmarkSubject.Baseline) async throws {
        // About 20 MB of values (a quarter of that compressed) against 1 MiB.
        let workload = Workload(
            .synthetic(keys: 20_000, distribution: .uniform, sizes: .uniform(512...1_536)), mix: .readThrough)
        let plan = BenchmarkPlan(workload: workload, length: .requests(20_000), tasks: [1], rounds: 1)
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("memory", baseline: kind) { _ in try MemoryTier(capacity: 1 << 20) }
        ])
        let baseline = try #require(results.results.first { $0.isBaseline })
        #expect(baseline.failure?.contains("outgrew its capacity (1 MiB)") == true, "\(baseline.status)")
        let subject = try #require(results.result("memory"))
        #expect(results.throughputRatio(of: subject) == nil)
        #expect(subject.status.hasPrefix("no ratio: its baseline failed"), "\(subject.status)")
    }

    /// Every subject sees the same requests: two runs of LRU at one capacity agree on every hit;
    /// a tier and its baseline, both LRU over the same bytes, differ only by the tier's per-entry
    /// overhead, so the baseline hits as often or a little more. One baseline serves both runs,
    /// and a subject of another capacity gets its own.
    @Test func subjectsSeeTheSameRequests() async throws {
        let plan = BenchmarkPlan(workload: Workload.zipf(keys: 5_000, sizes: .fixed(1_000)), length: .requests(20_000))
        let results = try await BenchmarkRunner(plan: plan).run([
            .memory(capacity: 1 << 20), .memory(capacity: 1 << 20), .memory(capacity: 2 << 20),
        ])
        #expect(
            results.results.map(\.subject) == [
                "minimal LRU 1 MiB", "memory-lru", "memory-lru (2)", "minimal LRU 2 MiB", "memory-lru (3)",
            ])
        #expect(results.results.last?.baseline == "minimal LRU 2 MiB")
        let runs = results.results.filter { $0.subject.hasPrefix("memory-lru") }
        #expect(runs.count == 3 && runs[0].hits == runs[1].hits && runs[2].hits > runs[0].hits)
        let baseline = try #require(results.result("minimal LRU 1 MiB"))
        #expect(baseline.hits >= runs[0].hits && Double(baseline.hits - runs[0].hits) < 0.05 * Double(baseline.reads))
    }

    /// A user's own policy is a subject like the built-ins.
    @Test func aUsersPolicyRunsInTheMemoryTier() async throws {
        let plan = BenchmarkPlan(workload: Workload.zipf(keys: 2_000, sizes: .fixed(256)), length: .requests(5_000))
        let results = try await BenchmarkRunner(plan: plan).run([
            .memory(capacity: 128 << 10, policyType: SmallWindow2Q.self)
        ])
        let result = try #require(results.result("memory-2q kin=5%"))
        #expect(result.failure == nil && result.hits > 0)
        #expect(results.throughputRatio(of: result) != nil)
    }

    /// 64 MiB and 64 MiB less a page print alike ("64 MiB"): two baselines all the same, each
    /// subject compared with its own.
    @Test func baselinesOfCapacitiesThatPrintAlikeStayApart() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 500, sizes: .fixed(64)), length: .requests(1_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .memory(capacity: 64 << 20), .memory(capacity: (64 << 20) - 4_096, policy: .fifo),
        ])
        let lru = try #require(results.result("memory-lru", tasks: 1))
        let fifo = try #require(results.result("memory-fifo", tasks: 1))
        let names = [lru.baseline, fifo.baseline].compactMap { $0 }
        #expect(names == ["minimal LRU 64 MiB", "minimal LRU 64 MiB (2)"])
        let baselineRows = results.results.filter(\.isBaseline).map(\.subject)
        #expect(baselineRows == names)
    }

    @Test func aFailingFactoryOrTierIsReportedAndTheOthersStillRun() async throws {
        struct Refusal: Error {}
        let plan = BenchmarkPlan(workload: Self.workload, length: .requests(5_000), tasks: [2], baselines: false)
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("unopenable") { _ in throw Refusal() },
            .localTier("breaks") { _ in try FailingTier(failingAfter: 500) },
            .memory(capacity: 1 << 20),
        ])
        let unopenable = try #require(results.result("unopenable"))
        #expect(unopenable.failure?.contains("could not be opened") == true)
        let breaks = try #require(results.result("breaks"))
        #expect(breaks.failure?.contains("disk on fire") == true)
        #expect(breaks.requests < 5_000, "both tasks stopped")
        let memory = try #require(results.result("memory-lru"))
        #expect(memory.failure == nil && memory.requests == plan.rounds * 5_000)
        #expect(results.report().tables[0].text.contains("disk on fire"))
    }

    /// Any value counted as a hit: a tier serving another key's value had a hit ratio, and a
    /// throughput ratio, as good as a correct one's.
    @Test func aTierServingAnotherKeysValueFails() async throws {
        let plan = BenchmarkPlan(workload: Self.workload, length: .requests(5_000), tasks: [2], baselines: false)
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("mixing") { _ in try KeyMixingTier() }, .memory(capacity: 1 << 20),
        ])
        let mixing = try #require(results.result("mixing"))
        #expect(
            mixing.failure?.contains("every value stored under it has") == true, "\(String(describing: mixing.failure))"
        )
        #expect(try #require(results.result("memory-lru")).failure == nil)
    }

    /// Stores a subject did not keep show in its row, counted from what it answered: a user's
    /// tier that refuses every store (and counts nothing itself), and a tiered cache whose lower
    /// tier fails (the cache counts the error and goes on), which then gets no ratio.
    @Test func refusedAndFailedStoresAreReported() async throws {
        let plan = BenchmarkPlan(workload: Self.workload, length: .requests(4_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("refuses", baseline: .minimalLRU) { _ in RefusingTier() },
            .tiered("lower fails", baseline: .minimalLRU) { _ in
                TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), try FailingTier(failingAfter: 0)])
            },
            .tiered("lower fails lookups", baseline: .minimalLRU) { _ in
                TieredCache(tiers: [
                    try MemoryTier(capacity: 4 << 10), try FailingTier(failingAfter: .max, lookups: true),
                ])
            },
        ])
        let refuses = try #require(results.result("refuses"))
        #expect(refuses.failure == nil && refuses.hits == 0)
        #expect(refuses.refusedStores == refuses.writes + refuses.reads, "every write and read-through store")
        #expect(refuses.status == "\(refuses.refusedStores) stores refused")
        #expect(results.throughputRatio(of: refuses) != nil)
        let failing = try #require(results.result("lower fails"))
        #expect(failing.failure == nil && failing.failedStores > 0 && failing.refusedStores == 0)
        #expect(failing.status.hasPrefix("\(failing.failedStores) stores failed"))
        #expect(results.throughputRatio(of: failing) == nil)
        #expect(results.report().tables[0].text.contains("stores failed"))
        // Lookups a lower tier failed are misses to the requests: the tiers' errors say so.
        let blind = try #require(results.result("lower fails lookups"))
        #expect(blind.failure == nil && blind.failedStores == 0 && blind.tierErrors > 0)
        #expect(blind.status.hasPrefix("\(blind.tierErrors) tier errors"), "\(blind.status)")
        #expect(results.throughputRatio(of: blind) == nil)
    }

    /// The minimal LRU charges an entry what the memory tier charges, and refuses what it
    /// refuses: at one capacity both hold the same entries, and an LRU memory tier hits exactly
    /// as often.
    @Test func theMinimalLRUHoldsWhatTheMemoryTierHolds() async throws {
        let plan = BenchmarkPlan(workload: Self.workload, length: .requests(20_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 64 << 10)])
        let memory = try #require(results.result("memory-lru"))
        let baselineName = try #require(memory.baseline)
        let baseline = try #require(results.result(baselineName))
        #expect(memory.hits == baseline.hits && memory.hits > 0)
        // Above 5% of 20 KiB: both refuse it.
        let wide = Workload(.synthetic(keys: 10, distribution: .uniform, sizes: .fixed(2_000)))
        let refusing = try await BenchmarkRunner(
            plan: BenchmarkPlan(workload: wide, length: .requests(100), tasks: [1], rounds: 1)
        ).run([.memory(capacity: 20 << 10)])
        for result in refusing.results {
            #expect(result.hits == 0 && result.refusedStores == 100, "\(result.subject)")
        }
    }

    /// The raw SQLite baseline's delete is prepared once, as its other statements are, and runs
    /// every removal of a delete-bearing mix.
    @Test func theRawSQLiteBaselineRunsAMixWithDeletes() async throws {
        let plan = BenchmarkPlan(workload: Self.workload, length: .requests(3_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("memory", baseline: .rawSQLiteZlib(.normal)) { _ in try MemoryTier(capacity: 1 << 20) }
        ])
        let baseline = try #require(results.results.first { $0.isBaseline })
        #expect(baseline.subject.hasPrefix("raw SQLite+zlib"))
        #expect(baseline.failure == nil && baseline.tierErrors == 0, "\(baseline.status)")
        #expect(baseline.deletes > 100 && baseline.hits > 0)
    }

    /// A user's disk tier may report a negative capacity; its raw LMDB or SQLite baseline, opened
    /// at that capacity, counts it as 0 and refuses every store (as the minimal LRU does), where
    /// the LMDB one's reads once trapped converting the capacity to UInt64, and the SQLite one
    /// stored every value and then failed to read it back.
    @Test(arguments: [
        (BenchmarkSubject.Baseline.automatic, "raw LMDB+zstd"),
        (.rawSQLiteZlib(.normal), "raw SQLite+zlib"),
    ])
    func aDiskTierReportingANegativeCapacityGetsAnEmptyBaseline(
        baseline kind: BenchmarkSubject.Baseline, named name: String
    ) async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(2_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("negative", baseline: kind) { _ in try OddUsageTier() }
        ])
        let baseline = try #require(results.results.first { $0.isBaseline })
        #expect(baseline.subject.hasPrefix(name))
        #expect(baseline.failure == nil && baseline.requests == plan.rounds * 2_000)
        #expect(baseline.hits == 0, "nothing stored, nothing hit")
        let subject = try #require(results.result("negative"))
        #expect(subject.failure == nil && subject.baseline == baseline.subject)
    }

    /// A user's disk tier of unknown capacity reports `Int.max`: its raw LMDB baseline reserves a
    /// map it can have (LMDB refused one of `Int.max` bytes, and the subject never got a ratio).
    @Test func aDiskTierOfUnknownCapacityGetsItsBaseline() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(1_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("unbounded", baseline: .automatic) { _ in try OddUsageTier(reportedCapacity: .max) }
        ])
        let baseline = try #require(results.results.first { $0.isBaseline })
        #expect(
            baseline.failure == nil && baseline.requests == plan.rounds * 1_000,
            "\(String(describing: baseline.failure))")
        #expect(baseline.hits > 0)
    }

    /// A user's tier whose usage throws still runs; the baseline that needed its capacity is a
    /// failed row saying why, where the subject's ratio would be.
    @Test func aBaselineWithoutItsTiersCapacitySaysWhy() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(1_000), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .localTier("unknown", baseline: .rawLMDBZstd) { _ in try OddUsageTier(throwsForUsage: true) }
        ])
        let baseline = try #require(results.results.first { $0.isBaseline })
        #expect(baseline.subject == "baseline of unknown")
        #expect(baseline.failure?.contains("did not report its capacity") == true)
        #expect(baseline.failure?.contains("usage unknown") == true)
        let subject = try #require(results.result("unknown"))
        #expect(
            subject.failure == nil && subject.requests == plan.rounds * 1_000 && subject.baseline == baseline.subject)
        // Its own row says why it has no ratio (it said "ok").
        #expect(subject.baselineFailure == baseline.failure && subject.status.contains("no ratio"), "\(subject.status)")
    }

    /// A tiered cache of a user's, memory over a disk tier, is compared with the disk tier's
    /// baseline (raw LMDB+zstd), as the `memoryOverLMDB` preset is: it was given a RAM-only LRU,
    /// chosen by its first tier.
    @Test func aTieredCacheIsComparedWithItsLowestDisksBaseline() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(500), tasks: [1])
        let results = try await BenchmarkRunner(plan: plan).run([
            .tiered("memory over mine") { _ in
                TieredCache(tiers: [try MemoryTier(capacity: 1 << 16), try OddUsageTier()])
            }
        ])
        let subject = try #require(results.result("memory over mine"))
        #expect(subject.baseline?.hasPrefix("raw LMDB+zstd") == true, "\(String(describing: subject.baseline))")
    }

    /// Results are found by name: two subjects of one name shared rows and ratios.
    @Test func subjectsOfOneNameAreToldApart() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 200, sizes: .fixed(64)), length: .requests(500), baselines: false)
        let results = try await BenchmarkRunner(plan: plan).run([
            .memory(capacity: 1 << 20), .memory(capacity: 1 << 10), .memory(capacity: 1 << 15),
        ])
        #expect(results.results.map(\.subject) == ["memory-lru", "memory-lru (2)", "memory-lru (3)"])
        #expect(try #require(results.result("memory-lru (2)")).hits < (try #require(results.result("memory-lru"))).hits)
        let subjects: [BenchmarkSubject] = ["a", "a (2)", "a"].map { name in
            var subject = BenchmarkSubject.memory(capacity: 1 << 20)
            subject.name = name
            return subject
        }
        let renamed = BenchmarkRunner.namedApart(subjects)
        #expect(renamed.map(\.name) == ["a", "a (2)", "a (3)"])
    }

    /// A run bounded by a duration cycles through the whole trace, however long, and through at
    /// least one request per key of a synthetic workload: not through a prefix of either.
    @Test func aDurationBoundedRunCyclesThroughTheWholeWorkload() throws {
        let trace = try Trace(name: "long", requests: (0..<3_000).map { TraceRequest(key: UInt64($0)) })
        var plan = BenchmarkPlan(workload: Workload(.trace(trace)), length: .duration(.seconds(1)))
        plan.cycleLength = 1_000
        #expect(plan.sequenceLength == 3_000)
        // Whole traces, the phases replaying one sequence: a counted phase beside a timed one adds
        // nothing to it.
        plan.warmUp = .requests(500)
        #expect(plan.sequenceLength == 3_000)
        plan.warmUp = .duration(.seconds(1))
        plan.length = .requests(7_000)
        #expect(plan.sequenceLength == 3_000)
        plan.cycleLength = 1 << 20
        plan.length = .duration(.seconds(1))
        #expect(plan.sequenceLength == 1_050_000)
        plan.cycleLength = 1_000
        // Both phases counted: no wrap, no rounding; each round measures the next requests.
        plan.warmUp = .requests(500)
        plan.length = .requests(700)
        #expect(plan.sequenceLength == 500 + 3 * 700)
        plan.length = .duration(.seconds(1))
        plan.workload = Workload.zipf(keys: 5_000)
        #expect(plan.sequenceLength == 5_500)
        plan.cycleLength = 10_000
        #expect(plan.sequenceLength == 10_500)
    }

    /// A cancelled run ends at once, each subject reported as cancelled: a minute-long run (an
    /// hour from the command line) once went on to its end.
    @Test func aCancelledRunEndsAndSaysSo() async throws {
        let plan = BenchmarkPlan(workload: Self.workload, length: .duration(.seconds(60)), tasks: [1])
        let run = Task { try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)]) }
        run.cancel()
        let results = try await run.value
        #expect(!results.results.isEmpty)
        #expect(
            results.results.allSatisfy { $0.failure?.contains("cancelled") == true }, "\(results.results.map(\.status))"
        )
    }

    @Test func aDurationBoundedRunStopsOnTime() async throws {
        var plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 1_000, sizes: .fixed(64)), length: .duration(.milliseconds(200)),
            baselines: false)
        plan.timelineWindow = 1_000
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)])
        let result = try #require(results.result("memory-lru"))
        #expect(result.requests > 0 && result.latency.count == (result.requests + 7) / 8)
        // At least the duration; no upper bound: a loaded machine may start the task late.
        #expect(result.seconds >= 0.2)
        #expect(!result.hitRatioTimeline.isEmpty)
    }

    /// A run bounded by duration, with far more windows than the chart's points: neighbouring
    /// windows are merged, and the timeline still reaches the run's end.
    @Test func aLongDurationBoundedRunKeepsItsTimelineShort() async throws {
        var plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 1_000, sizes: .fixed(64)), length: .duration(.milliseconds(200)),
            tasks: [1], baselines: false)
        plan.timelineWindow = 1
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)])
        let result = try #require(results.result("memory-lru"))
        try #require(result.requests > 4 * plan.timelinePoints, "too short a run to need merging")
        let timeline = result.hitRatioTimeline
        #expect(!timeline.isEmpty && timeline.count <= 2 * plan.timelinePoints, "\(timeline.count) points")
        #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.requests < $1.requests })
        #expect((timeline.last?.requests ?? 0) > result.requests / 2)
    }

    /// Prefilled and read without storing, every read hits; with sampling 1, every request is timed.
    @Test func aPrefilledGetHitRunHitsEveryTimeAndTimesEveryRequestWhenAsked() async throws {
        var plan = BenchmarkPlan(
            workload: Workload(
                .synthetic(keys: 3_000, distribution: .zipf(skew: 0.99), sizes: .fixed(512)),
                mix: OperationMix(reads: 1, readThrough: false)),
            length: .requests(6_000), tasks: [2], baselines: false, rounds: 1)
        plan.prefill = true
        plan.latencySampling = 1
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 8 << 20)])
        let result = try #require(results.result("memory-lru"))
        #expect(result.hits == 6_000 && result.hitRatio == 1 && result.byteHitRatio == 1)
        #expect(result.latency.count == 6_000)
        #expect(result.tiers.first?.stores == 0, "the prefill is not part of the measured phase")
    }

    /// A trace is replayed with its own object sizes: the byte hit ratio weighs hits by them.
    @Test func aTraceIsReplayedWithItsSizes() async throws {
        let requests = (0..<4_000).map { index -> TraceRequest in
            let key = UInt64(index % 50)
            return TraceRequest(key: key, size: key == 0 ? 40_000 : 100)
        }
        let trace = try Trace(name: "sized", requests: requests, hasSizes: true)
        let plan = BenchmarkPlan(
            workload: Workload(.trace(trace)), length: .requests(4_000), baselines: false, rounds: 1)
        let results = try await BenchmarkRunner(plan: plan).run([.minimalLRU(capacity: 20_000)])
        #expect(results.results.map(\.subject) == ["minimal LRU 19.5 KiB"])
        let result = try #require(results.result("minimal LRU 19.5 KiB"))
        // Key 0 (40,000 bytes) never fits in 20,000; the other 49 keys always do once seen.
        #expect(result.hits == 4_000 - 80 - 49)
        #expect(result.readBytes == 80 * 40_000 + 3_920 * 100)
        #expect(result.hitBytes == UInt64(result.hits) * 100)
        #expect(result.byteHitRatio < result.hitRatio)
    }
}

/// A user's policy: 2Q with a smaller first-request queue, as a type.
struct SmallWindow2Q: EvictionPolicyVariant {
    static let name = "2Q Kin=5%"
    var base: TwoQPolicy
    init(context: PolicyContext) { base = TwoQPolicy(context: context, inFraction: 0.05, outFraction: 0.5) }
}

/// A tier of the user's that refuses every store and counts nothing.
final class RefusingTier: LocalCacheTier {
    let name = "refusing"
    let medium = TierMedium.memory
    func entry(forKey key: CacheKey) -> CacheEntry? { nil }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome { .refused(.outOfSpace(detail: "full")) }
    func removeEntry(forKey key: CacheKey) {}
    func removeAll() {}
    func usage() -> TierUsage { TierUsage(bytes: 0, entries: 0, capacity: 1 << 20, maxEntryBytes: 1 << 20) }
    func statistics() -> TierStatistics { TierStatistics() }
}

/// A memory tier that answers every read with the last value stored, whatever its key.
final class KeyMixingTier: LocalCacheTier {
    let name = "mixing"
    let medium = TierMedium.memory
    private let inner: MemoryTier
    private let last = Mutex<CacheEntry?>(nil)

    init() throws { inner = try MemoryTier(capacity: 1 << 20) }

    func entry(forKey key: CacheKey) -> CacheEntry? {
        guard inner.entry(forKey: key) != nil else { return nil }
        return last.withLock { $0 }
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        last.withLock { $0 = entry }
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) { inner.removeEntry(forKey: key) }
    func removeAll() { inner.removeAll() }
    func usage() -> TierUsage { inner.usage() }
    func statistics() -> TierStatistics { inner.statistics() }
}

/// A memory tier whose stores start throwing after a number of them: a tier failing mid-run.
final class FailingTier: LocalCacheTier {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk on fire" }
    }
    let name = "failing"
    let medium = TierMedium.disk
    private let inner: MemoryTier
    private let storesLeft: Mutex<Int>

    private let failsLookups: Bool

    /// Fails every store after the first `stores`, and with `lookups`, every lookup.
    init(failingAfter stores: Int, lookups: Bool = false) throws {
        inner = try MemoryTier(capacity: 1 << 20)
        storesLeft = Mutex(stores)
        failsLookups = lookups
    }

    func entry(forKey key: CacheKey) throws -> CacheEntry? {
        if failsLookups { throw Failure() }
        return inner.entry(forKey: key)
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        guard
            storesLeft.withLock({
                $0 -= 1
                return $0 >= 0
            })
        else { throw Failure() }
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) { inner.removeEntry(forKey: key) }
    func removeAll() { inner.removeAll() }
    func usage() -> TierUsage { inner.usage() }
    func statistics() -> TierStatistics { inner.statistics() }
}

/// A disk tier (a memory tier underneath) whose usage reports a capacity of −1, or throws.
final class OddUsageTier: LocalCacheTier {
    struct Unknown: Error, CustomStringConvertible {
        var description: String { "usage unknown" }
    }
    let name = "odd usage"
    let medium = TierMedium.disk
    private let inner: MemoryTier
    private let throwsForUsage: Bool

    private let reportedCapacity: Int

    init(throwsForUsage: Bool = false, reportedCapacity: Int = -1) throws {
        inner = try MemoryTier(capacity: 1 << 20)
        self.throwsForUsage = throwsForUsage
        self.reportedCapacity = reportedCapacity
    }

    func entry(forKey key: CacheKey) -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome { inner.store(entry, forKey: key) }
    func removeEntry(forKey key: CacheKey) { inner.removeEntry(forKey: key) }
    func removeAll() { inner.removeAll() }
    func usage() throws -> TierUsage {
        if throwsForUsage { throw Unknown() }
        var usage = inner.usage()
        usage.capacity = reportedCapacity
        return usage
    }
    func statistics() -> TierStatistics { inner.statistics() }
}
