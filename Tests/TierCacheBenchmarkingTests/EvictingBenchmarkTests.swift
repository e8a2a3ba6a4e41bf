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
}
