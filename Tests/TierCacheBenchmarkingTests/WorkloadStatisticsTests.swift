import Foundation
import Testing

@testable import TierCacheBenchmarking

/// The generators produce the distributions they name: checked on 200,000 draws with bounds of
/// several standard deviations, so a correct generator passes with any seed and a wrong one fails.
@Suite struct WorkloadStatisticsTests {
    private func counts(_ distribution: KeyDistribution, keys: Int, draws: Int = 200_000) throws -> [Int] {
        let workload = Workload(.synthetic(keys: keys, distribution: distribution, sizes: .fixed(1)))
        let sequence = try workload.requests(length: draws)
        var counts = [Int](repeating: 0, count: keys)
        for object in sequence.objects { counts[Int(object)] += 1 }
        return counts
    }

    /// Zipf's rank-frequency law: log(frequency) against log(rank) is a line of slope −skew.
    @Test(arguments: [0.6, 0.99, 1.2])
    func zipfRankFrequencyHasSlopeMinusSkew(skew: Double) throws {
        let counts = try counts(.zipf(skew: skew), keys: 10_000)
        // The 100 most popular ranks: each drawn hundreds of times or more, so sampling noise is small.
        let points = (0..<100).map { (log(Double($0 + 1)), log(Double(max(counts[$0], 1)))) }
        let meanX = points.map(\.0).reduce(0, +) / 100
        let meanY = points.map(\.1).reduce(0, +) / 100
        let slope =
            points.map { ($0.0 - meanX) * ($0.1 - meanY) }.reduce(0, +)
            / points.map { ($0.0 - meanX) * ($0.0 - meanX) }.reduce(0, +)
        #expect(abs(slope + skew) < 0.05, "slope \(slope) for skew \(skew)")
        #expect(counts[0] > counts[9] && counts[9] > counts[99], "rank 0 is the most popular")
    }

    @Test func uniformGivesEveryKeyItsShare() throws {
        let counts = try counts(.uniform, keys: 100)
        // 2,000 expected per key, standard deviation about 44: 6 sigma is 270.
        #expect(counts.allSatisfy { abs($0 - 2_000) < 270 }, "\(counts.min() ?? 0)...\(counts.max() ?? 0)")
    }

    @Test func hotspotSendsItsShareToTheHotKeys() throws {
        let counts = try counts(.hotspot(hotFraction: 0.1, hotProbability: 0.9), keys: 1_000)
        let hot = Double(counts.prefix(100).reduce(0, +)) / 200_000
        #expect(abs(hot - 0.9) < 0.005)
    }

    /// The scan's share of requests walks the cold keys in order; the rest stay in the hot set.
    @Test func scanWalksTheColdKeysInOrder() throws {
        let workload = Workload(
            .synthetic(keys: 10_000, distribution: .scan(hotKeys: 100, scanProbability: 0.25), sizes: .fixed(1)))
        let objects = try workload.requests(length: 200_000).objects
        let cold = objects.filter { $0 >= 100 }
        #expect(abs(Double(cold.count) / 200_000 - 0.25) < 0.005)
        #expect(
            cold.prefix(9_900) == ArraySlice((100..<10_000).map(UInt32.init)), "one pass over the cold keys, in order")
        #expect(cold[9_900] == 100, "then round again")
    }

    @Test func mixSharesAreKept() throws {
        let mix = try OperationMix(parsing: "70:20:10")
        let workload = Workload(.synthetic(keys: 1_000, distribution: .uniform, sizes: .fixed(8)), mix: mix)
        let sequence = try workload.requests(length: 200_000)
        let reads = sequence.operations.filter { $0 == .read }.count
        let writes = sequence.operations.filter { $0 == .write }.count
        let deletes = sequence.operations.filter { $0 == .delete }.count
        // Binomial standard deviations are at most 205 requests here; 1,200 is about six.
        #expect(abs(reads - 140_000) < 1_200 && abs(writes - 40_000) < 1_200 && abs(deletes - 20_000) < 1_200)
        #expect(try OperationMix(parsing: "0.9:0.1") == OperationMix(reads: 0.9, writes: 0.1))
    }

    @Test func sizesStayInTheirRangeAndAreSpreadOverIt() throws {
        let uniform = Workload(.synthetic(keys: 20_000, distribution: .uniform, sizes: .uniform(100...300)))
        let sizes = try uniform.requests(length: 1).sizes
        #expect(sizes.min() == 100 && sizes.max() == 300)
        let mean = Double(sizes.reduce(0) { $0 + Int($1) }) / Double(sizes.count)
        #expect(abs(mean - 200) < 2)
        let fixed = Workload(.synthetic(keys: 10, distribution: .uniform, sizes: .fixed(4096)))
        #expect(try fixed.requests(length: 1).sizes.allSatisfy { $0 == 4096 })
        #expect(try ValueSizes(parsing: "4KiB") == .fixed(4096))
        #expect(try ValueSizes(parsing: "256-4096") == .uniform(256...4096))
    }

    @Test func theSameSeedGivesTheSameRequests() throws {
        let workload = Workload.zipf(keys: 1_000)
        #expect(try workload.requests(length: 1_000).objects == workload.requests(length: 1_000).objects)
        var other = workload
        other.seed = 7
        #expect(try workload.requests(length: 1_000).objects != other.requests(length: 1_000).objects)
    }
}
