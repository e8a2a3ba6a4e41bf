import DiskTestSupport
import Foundation
import Testing
import TierCache

@testable import TierCacheLMDB

/// Damage the check at open does not read: the recency index's rows. Eviction met a row whose key
/// has no record the same way every time, and looped for ever inside its write transaction.
@Suite("LMDBTier: a damaged recency index")
struct LMDBDamagedIndexTests {
    @Test(
        "A recency row naming a missing key, or none, is dropped when eviction meets it; stores go on",
        arguments: [Array("entry-4Z".utf8), []])
    func damagedRecencyRowsAreDropped(named damagedKey: [UInt8]) throws {
        let directory = TemporaryDirectory()
        let capacity = 1 << 20
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: capacity, durability: .none))
        #expect(try tier.store(entry(incompressible(20_000, seed: 0)), forKey: key("entry-42")) == .stored)
        try tier.environment.write { txn in
            let (tick, _) = try #require(try txn.first(tier.environment.recency))
            try tick.withUnsafeBytes { tick in
                try damagedKey.withUnsafeBytes { try txn.put(tier.environment.recency, tick, $0) }
            }
        }
        for index in 1...200 {
            let stored = try tier.store(entry(incompressible(20_000, seed: UInt64(index))), forKey: key("k\(index)"))
            #expect(stored == .stored, "store \(index)")
        }
        #expect(try tier.entry(forKey: key("k200"))?.value == incompressible(20_000, seed: 200))
        #expect(try tier.usage().bytes <= capacity)
    }
}
