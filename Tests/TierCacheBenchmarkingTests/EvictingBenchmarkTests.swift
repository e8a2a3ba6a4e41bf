import DiskTestSupport
import Testing
import TierCache
import TierCacheLMDB

@testable import TierCacheBenchmarking

/// The standard benchmark "get-or-set with evictions" (registered for package-benchmark) fills
/// its subject first and draws from four times the entries it then holds: an empty subject took
/// the whole run without evicting.
@Suite struct EvictingBenchmarkTests {
    @Test func theSubjectIsFilledAndTheKeySpaceIsFourTimesWhatItHolds() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let keys = try await SubjectDriver.localTier(memory).fillForEvicting(keys: 100, valueSize: 1_024)
        let held = memory.usage()
        #expect(held.entries > 0 && held.bytes > (1 << 20) * 9 / 10, "filled: \(held)")
        #expect(keys == 4 * held.entries)
        #expect(memory.statistics().evictions > 0)
    }

    /// Compressed, a disk tier holds more entries than its capacity over the value size: the key
    /// space counts what it holds, not that.
    @Test func aCompressingTierGetsTheKeysItHolds() async throws {
        let directory = TemporaryDirectory()
        let lmdb = try LMDBTier(directory: directory.url, capacity: 2 << 20)
        let keys = try await SubjectDriver.localTier(lmdb).fillForEvicting(keys: 100, valueSize: 1_024)
        let held = try lmdb.usage().entries
        #expect(held > (2 << 20) / 1_024, "compressed values: more entries than 2 MiB of 1 KiB")
        #expect(keys == 4 * held)
    }

    /// Memory over a disk: the key space is four times what the disk, the larger, holds, so that
    /// both tiers evict (sized by the memory tier, the disk held every key).
    @Test func aTieredCacheIsSizedByItsLargestTier() async throws {
        let directory = TemporaryDirectory()
        let memory = try MemoryTier(capacity: 1 << 18)
        let lmdb = try LMDBTier(directory: directory.url, capacity: 2 << 20)
        let keys = try await SubjectDriver.tiered(TieredCache(tiers: [memory, lmdb]))
            .fillForEvicting(keys: 100, valueSize: 1_024)
        let held = try lmdb.usage().entries
        #expect(held > memory.usage().entries)
        #expect(keys == 4 * held)
    }

    /// The get-hit benchmark times hits: a subject that cannot hold its keys is refused, saying
    /// so, rather than timed missing.
    @Test func aGetHitSubjectTooSmallForItsKeysIsRefused() async throws {
        let sequence = try Workload(.synthetic(keys: 2_000, distribution: .uniform, sizes: .fixed(1_024)))
            .requests(length: 1)
        let keys = try sequence.keys()
        let small = SubjectDriver.localTier(try MemoryTier(capacity: 1 << 20))
        try await small.storeEveryKey(of: sequence, keys: keys)
        await #expect {
            try await small.requireEveryKey(keys, of: "small", valueSize: 1_024)
        } throws: { error in
            "\(error)".contains("holds") && "\(error)".contains("more capacity")
        }
        let large = SubjectDriver.localTier(try MemoryTier(capacity: 64 << 20))
        try await large.storeEveryKey(of: sequence, keys: keys)
        try await large.requireEveryKey(keys, of: "large", valueSize: 1_024)
    }
}
