import Foundation
import Testing
import TierCache

@testable import CacheSimulation

@Suite struct LiveCurveSamplerTests {
    /// A skewed, deterministic key sequence.
    private func keys(count: Int, distinct: Int) -> [Int] {
        var state: UInt64 = 99
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let uniform = Double(state >> 11) / Double(1 << 53)
            return Int(uniform * uniform * uniform * Double(distinct))
        }
    }

    /// With entries of a byte or less on average, a byte capacity near Int.max is more objects
    /// than an Int holds: the count saturates instead of trapping.
    @Test func aHugeByteCapacityOverTinyEntriesSaturates() throws {
        let sampler = LiveCurveSampler(maximumKeys: 256)
        for index in 0..<1_000 { sampler.recordLookup(try CacheKey("k\(index % 100)")) }
        sampler.recordStore(bytes: 1)
        #expect(
            sampler.estimatedHitRatio(forCapacityBytes: .max) == sampler.estimatedHitRatio(forCapacityObjects: .max))
        sampler.recordStore(bytes: 0)
        #expect(sampler.meanEntrySize == 0.5)
        #expect(
            sampler.estimatedHitRatio(forCapacityBytes: .max) == sampler.estimatedHitRatio(forCapacityObjects: .max))
        #expect(sampler.estimatedHitRatio(forCapacityBytes: .min) == sampler.estimatedHitRatio(forCapacityObjects: 0))
    }

    @Test func aSampledMemoryTierPredictsItsOwnHitRatio() async throws {
        let sampler = LiveCurveSampler(maximumKeys: 2_048)
        let tier = SampledTier(try MemoryTier(capacity: 1 << 30, maxEntryCount: 1_000), sampler: sampler)
        let cache = TieredCache(tiers: [tier])
        #expect(cache.isEntirelyLocal, "wrapping a local tier must keep the synchronous path")
        let sequence = keys(count: 60_000, distinct: 20_000)
        var hits = 0
        for index in sequence {
            let key = try CacheKey("item/\(index)")
            if cache.localEntry(forKey: key) != nil {
                hits += 1
            } else {
                _ = await cache.store(
                    CacheEntry(value: [UInt8](repeating: 1, count: 100), storedAt: Date()), forKey: key,
                    policy: .allowed)
            }
        }
        let observed = Double(hits) / Double(sequence.count)
        let predicted = sampler.estimatedHitRatio(forCapacityObjects: 1_000)
        #expect(abs(predicted - observed) < 0.05, "predicted \(predicted), observed \(observed)")
        #expect(sampler.estimatedHitRatio(forCapacityObjects: 4_000) > predicted)
        #expect(sampler.sampling.trackedKeys <= 2_048)
        // Stores are recorded at the tier's charge: the value, the key ("item/N") and 64 bytes.
        let charge = try #require(sampler.meanEntrySize)
        #expect(charge > 100 + 64 + 6 && charge < 100 + 64 + 11, "\(charge)")
    }

    /// A tier bounded by bytes: the sampler's estimate at the tier's capacity in bytes is the
    /// tier's hit ratio, since it counts entries at what the tier charges for them (counted at
    /// their 10-byte values alone, it took the tier to hold eight times the entries it does).
    @Test func aSampledByteBoundedMemoryTierPredictsItsOwnHitRatio() throws {
        let sampler = LiveCurveSampler(maximumKeys: 2_048)
        let capacity = 84_000
        let tier = SampledTier(try MemoryTier(capacity: capacity), sampler: sampler)
        let sequence = keys(count: 60_000, distinct: 20_000)
        var hits = 0
        for index in sequence {
            let key = try CacheKey("item/\(index)")
            if try tier.entry(forKey: key) != nil {
                hits += 1
            } else {
                _ = try tier.store(CacheEntry(value: [UInt8](repeating: 1, count: 10), storedAt: Date()), forKey: key)
            }
        }
        let observed = Double(hits) / Double(sequence.count)
        let predicted = try #require(sampler.estimatedHitRatio(forCapacityBytes: capacity))
        #expect(abs(predicted - observed) < 0.05, "predicted \(predicted), observed \(observed)")
    }

    @Test func theSampledCurveFollowsTheExactOne() throws {
        let sequence = keys(count: 200_000, distinct: 50_000)
        let sampler = LiveCurveSampler()
        for index in sequence { sampler.recordLookup(try CacheKey("k\(index)")) }
        let trace = try Trace(name: "live", requests: sequence.map { TraceRequest(key: UInt64($0)) })
        let exact = ExactLRUCurve.compute(trace, unit: .objects)
        let grid = CapacityTuner.grid(footprint: UInt64(trace.objectCount), points: 30)
        #expect(sampler.curve().meanAbsoluteError(against: exact.sampled(at: grid)) < 0.03)
    }

    /// Keys not sampled are counted without the lock: from threads at once, every lookup is
    /// counted; from one, the sampler ends with the curve and counts of a SHARDS fed every lookup.
    @Test func lookupsFromManyThreadsAreCountedAsOneSampleWouldCountThem() async throws {
        let sequence = keys(count: 40_000, distinct: 20_000)
        let cacheKeys = try sequence.map { try CacheKey("k\($0)") }
        let sampler = LiveCurveSampler(maximumKeys: 256)
        // Interleaved, the threads' distances differ from run to run: the counts are checked
        // here, the curve against one SHARDS below, fed from one thread.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { for key in cacheKeys { sampler.recordLookup(key) } } }
        }
        #expect(sampler.sampling.lookups == 4 * UInt64(cacheKeys.count))
        let sequential = LiveCurveSampler(maximumKeys: 256)
        for key in cacheKeys { sequential.recordLookup(key) }
        var shards = SHARDS(mode: .fixedSize(maximumKeys: 256), unit: .objects)
        for key in cacheKeys { shards.record(key: LiveCurveSampler.stableHash(key), size: 1) }
        #expect(sequential.sampling.lookups == shards.requestsSeen)
        #expect(sequential.sampling.rate == shards.rate && sequential.sampling.trackedKeys == shards.trackedKeys)
        #expect(sequential.curve() == shards.curve())
    }

    @Test func nothingStoredMeansNoByteEstimate() {
        #expect(LiveCurveSampler().estimatedHitRatio(forCapacityBytes: 1 << 20) == nil)
    }
}
