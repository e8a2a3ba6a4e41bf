import CacheSimulation
import Testing

@testable import TierCacheBenchmarking

/// Bad input gets a `BenchmarkError` saying what is wrong, never a trap.
@Suite struct BadInputTests {
    private func rejects(_ workload: Workload, _ words: String) {
        #expect {
            try workload.validate()
        } throws: { error in
            guard case BenchmarkError.invalidWorkload(let reason) = error else { return false }
            return reason.contains(words)
        }
    }

    @Test func syntheticWorkloadsWithImpossibleParametersAreRefused() {
        rejects(Workload(.synthetic(keys: 0, distribution: .uniform, sizes: .fixed(1))), "keys")
        // Two billion keys were accepted, and the run killed for the sampler's 32 GB of tables.
        rejects(Workload(.synthetic(keys: 2_000_000_000, distribution: .zipf(skew: 0.99), sizes: .fixed(1))), "keys")
        rejects(Workload(.synthetic(keys: Workload.maximumKeys + 1, distribution: .uniform, sizes: .fixed(1))), "keys")
        rejects(Workload(.synthetic(keys: 10, distribution: .uniform, sizes: .fixed(0))), "positive")
        rejects(Workload(.synthetic(keys: 10, distribution: .uniform, sizes: .fixed(-5))), "positive")
        rejects(Workload(.synthetic(keys: 10, distribution: .uniform, sizes: .uniform(-10...10))), "positive")
        rejects(Workload(.synthetic(keys: 10, distribution: .uniform, sizes: .fixed(1 << 40))), "at most")
        rejects(Workload(.synthetic(keys: 10, distribution: .zipf(skew: -1), sizes: .fixed(1))), "skew")
        rejects(Workload(.synthetic(keys: 10, distribution: .zipf(skew: .nan), sizes: .fixed(1))), "skew")
        rejects(
            Workload(
                .synthetic(keys: 10, distribution: .hotspot(hotFraction: 1.5, hotProbability: 0.5), sizes: .fixed(1))),
            "hotspot")
        rejects(
            Workload(.synthetic(keys: 10, distribution: .scan(hotKeys: 10, scanProbability: 0.5), sizes: .fixed(1))),
            "hot set")
        rejects(Workload.zipf(keys: 10, mix: OperationMix(reads: 0.5, writes: 0.2)), "add up")
    }

    /// A hotspot over a single key has no cold set: every draw is that key (a cold draw once
    /// yielded key 1 of 1, out of the sizes' range). Over more keys, every draw is a key.
    @Test(arguments: [1, 2, 3, 7])
    func aHotspotDrawsOnlyItsOwnKeys(keys: Int) throws {
        let workload = Workload(
            .synthetic(keys: keys, distribution: .hotspot(hotFraction: 0.2, hotProbability: 0.8), sizes: .fixed(1)))
        let objects = try workload.requests(length: 2_000).objects
        #expect(objects.allSatisfy { Int($0) < keys }, "keys drawn: \(Set(objects).sorted())")
        #expect(Set(objects).count == keys, "every key drawn")
    }

    /// Descriptions quote values not yet validated (a mix's error quotes the mix): NaN, infinite
    /// and huge shares print, and validation throws, instead of trapping in Int(_:).
    @Test(arguments: [Double.nan, .infinity, -.infinity, 1e17, -1e17])
    func oddSharesAreRefusedAndDescribedWithoutTrapping(share: Double) {
        rejects(Workload.zipf(keys: 10, mix: OperationMix(reads: share)), "add up")
        #expect(OperationMix(reads: share, writes: share, deletes: share).description.hasSuffix("% deletes"))
        let distributions: [KeyDistribution] = [
            .hotspot(hotFraction: share, hotProbability: share), .scan(hotKeys: 1, scanProbability: share),
        ]
        for distribution in distributions {
            #expect(distribution.description.contains("%"))
            rejects(Workload(.synthetic(keys: 10, distribution: distribution, sizes: .fixed(1))), "probability")
        }
    }

    @Test func anEmptyTraceIsRefused() throws {
        let empty = try Trace(name: "empty", requests: [], hasSizes: false)
        rejects(Workload(.trace(empty)), "no requests")
    }

    @Test func malformedSizesAndMixesAreRefused() {
        for text in ["", "abc", "-5", "10-", "300-100", "1-2-3"] {
            #expect(throws: BenchmarkError.self, "\(text)") { try ValueSizes(parsing: text) }
        }
        // An empty part is refused, not dropped: `90::10` read as 90% reads and 10% writes.
        for text in ["", "90", "a:b", "-1:2", "0:0", "1:2:3:4", "90::10", ":10:90", "90:10:"] {
            #expect(throws: BenchmarkError.self, "\(text)") { try OperationMix(parsing: text) }
        }
    }

    @Test func plansThatCannotRunAreRefused() {
        let workload = Workload.zipf(keys: 10)
        for plan in [
            BenchmarkPlan(workload: workload, tasks: []),
            BenchmarkPlan(workload: workload, tasks: [0]),
            BenchmarkPlan(workload: workload, tasks: [1, 5_000]),
            BenchmarkPlan(workload: workload, length: .requests(0)),
            BenchmarkPlan(workload: workload, length: .requests(-1)),
            BenchmarkPlan(workload: workload, length: .duration(.zero)),
            BenchmarkPlan(workload: workload, warmUp: .requests(-3)),
            // Requests are made up front: counts past the bound are refused, never summed into
            // an overflow.
            BenchmarkPlan(workload: workload, length: .requests(Int.max), warmUp: .requests(1)),
            BenchmarkPlan(workload: workload, length: .requests(1), warmUp: .requests(RunLength.maximumRequests + 1)),
            BenchmarkPlan(workload: workload, rounds: 0),
            BenchmarkPlan(workload: workload, rounds: -2),
            BenchmarkPlan(workload: workload, rounds: BenchmarkPlan.maximumRounds + 1),
            // Every round's requests are made up front too.
            BenchmarkPlan(workload: workload, length: .requests(RunLength.maximumRequests / 2 + 1), rounds: 2),
            // A cycle past the bound overflowed the sequence's length, or asked for 40 GiB; so
            // many timeline points trapped after the run.
            changed(BenchmarkPlan(workload: workload, length: .duration(.seconds(1)), warmUp: .requests(1))) {
                $0.cycleLength = .max
            },
            changed(BenchmarkPlan(workload: workload, length: .duration(.seconds(1)))) { $0.cycleLength = 1 << 33 },
            changed(BenchmarkPlan(workload: workload)) { $0.timelinePoints = .max },
        ] {
            #expect(throws: BenchmarkError.self) { try BenchmarkRunner(plan: plan) }
        }
        #expect(throws: BenchmarkError.self) { try workload.requests(length: Int.max) }
        // A warm-up and rounds each within the bound but not together: refused by the plan
        // itself, which the command line checks before it loads a trace.
        #expect(throws: BenchmarkError.self) {
            try BenchmarkPlan(workload: workload, length: .requests(1), warmUp: .requests(RunLength.maximumRequests))
                .validate()
        }
    }

    private func changed(_ plan: BenchmarkPlan, _ change: (inout BenchmarkPlan) -> Void) -> BenchmarkPlan {
        var plan = plan
        change(&plan)
        return plan
    }

    /// The evicting standard benchmark's key space, four times what the tier holds: a tier too
    /// large for it (an unbounded one reports `Int.max`) is an error naming the fix, not a trap.
    @Test func anEvictingKeySpaceTooLargeForAWorkloadIsRefused() throws {
        #expect(try Workload.keysEvicting(capacity: 1 << 20, valueSize: 1024, atLeast: 100) == 4_096)
        #expect(try Workload.keysEvicting(capacity: 1 << 10, valueSize: 1024, atLeast: 100) == 100)
        #expect(try Workload.keysEvicting(capacity: 1 << 20, valueSize: 0, atLeast: 1) == 4 << 20)
        for capacity in [Int.max, 1 << 40] {
            #expect {
                try Workload.keysEvicting(capacity: capacity, valueSize: 1024, atLeast: 100)
            } throws: { error in
                guard case BenchmarkError.invalidWorkload(let reason) = error else { return false }
                return reason.contains("use larger values")
            }
        }
    }

    /// Values are real bytes, at most `ValueSizes.maximum`: a trace's larger objects are stored at
    /// that size, and the workload's description counts them.
    @Test func traceObjectsOverTheLargestValueAreCountedInTheDescription() throws {
        let over = UInt32(ValueSizes.maximum + 1)
        let trace = try Trace(
            name: "cdn", requests: [TraceRequest(key: 1, size: over), TraceRequest(key: 2, size: 10)], hasSizes: true)
        #expect(Workload(.trace(trace)).description.contains("1 objects over \(ValueSizes.maximum) bytes"))
        #expect(try Workload(.trace(trace)).requests(length: 2).sizes == [UInt32(ValueSizes.maximum), 10])
        let small = try Trace(name: "small", requests: [TraceRequest(key: 1, size: 10)], hasSizes: true)
        #expect(!Workload(.trace(small)).description.contains("over"))
    }
}
