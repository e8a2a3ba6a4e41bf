import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheLMDB

@Suite("TieredCache over memory and LMDB")
struct TieredLMDBTests {
    @Test("Memory over LMDB: policies, the 5% refusal and promotion, end to end")
    func memoryOverDisk() async throws {
        let directory = TemporaryDirectory()
        let memory = try MemoryTier(capacity: 4 << 20)
        let disk = try LMDBTier(directory: directory.url, capacity: 4 << 20)
        let cache = TieredCache(tiers: [memory, disk], policyTable: .standard)

        // Over the disk tier's 5% (209,715 bytes) once framed, but under memory's own limit? No:
        // memory's limit is the same 5%, so both refuse, visibly.
        let big = entry(incompressible(250_000))
        let report = await cache.store(big, forKey: key("big"), url: try #require(URL(string: "https://a.example/big")))
        #expect(!report.isStoredAnywhere)
        for (_, outcome) in report.outcomes {
            guard case .refused(.tooLarge) = outcome else {
                Issue.record("outcome \(outcome)")
                continue
            }
        }
        let statistics = await cache.statistics()
        #expect(statistics.map(\.statistics.refusedTooLarge) == [1, 1])

        // http is memory-only: nothing reaches the disk.
        await cache.store(entry([1]), forKey: key("plain"), url: try #require(URL(string: "http://a.example/")))
        #expect(try disk.entry(forKey: key("plain")) == nil)

        // An https entry evicted from memory comes back from disk and is promoted.
        await cache.store(entry([2]), forKey: key("secure"), url: try #require(URL(string: "https://a.example/")))
        memory.removeEntry(forKey: key("secure"))
        #expect(await cache.lookup(key("secure"))?.tierName == "lmdb")
        #expect(memory.entry(forKey: key("secure"))?.value == [2])
    }
}
