import Foundation
import Testing
import TierCacheEviction

@testable import TierCache

/// A memory tier numbers its keys with the policy's 32-bit slot ids: once every id is in use, a
/// new key is refused (out of space, and said so) rather than given an id the policy's queues
/// would wrap to a negative link. The real limit (`PolicyContext.maximumSlotCount`) takes over
/// tens of GiB of entries; these tiers have a limit of 3.
@Suite("The memory tier's slot limit")
struct MemoryTierSlotLimitTests {
    private func value(_ count: Int) -> CacheEntry {
        CacheEntry(value: [UInt8](repeating: 7, count: count), storedAt: Date(timeIntervalSince1970: 0))
    }

    @Test(
        "A new key past the limit is refused as out of space; stored entries stay, and a freed slot takes the next key")
    func refusesPastTheLimit() throws {
        let tier = try MemoryTier(
            MemoryTier.Configuration(capacity: 100_000), policyType: LRUPolicy.self, maximumSlots: 3)
        for name in ["a", "b", "c"] {
            #expect(tier.store(value(10), forKey: try CacheKey(name)) == .stored)
        }
        let outcome = tier.store(value(10), forKey: try CacheKey("d"))
        guard case .refused(.outOfSpace(let detail)) = outcome else {
            Issue.record("expected an out-of-space refusal, got \(outcome)")
            return
        }
        #expect(detail.contains("\(PolicyContext.maximumSlotCount) keys"))
        #expect(tier.entry(forKey: try CacheKey("d")) == nil)
        for name in ["a", "b", "c"] {
            #expect(tier.entry(forKey: try CacheKey(name))?.value.count == 10)
        }
        // A stored key keeps its slot, whatever the new value's size.
        #expect(tier.store(value(10), forKey: try CacheKey("a")) == .stored)
        #expect(tier.store(value(20), forKey: try CacheKey("a")) == .stored)
        #expect(tier.entry(forKey: try CacheKey("a"))?.value.count == 20)

        tier.removeEntry(forKey: try CacheKey("b"))
        #expect(tier.store(value(10), forKey: try CacheKey("d")) == .stored)
        #expect(tier.statistics().refusedOutOfSpace == 1)
    }

    @Test("Keys the policy remembers (ARC's ghosts) hold slots too, and come back into their own")
    func ghostsHoldSlots() throws {
        // Two entries of 300 bytes fit (each costs its key and 64 bytes more), a third evicts.
        let configuration = MemoryTier.Configuration(capacity: 1_000, maxEntryFraction: 0.5)
        let tier = try MemoryTier(configuration, policyType: ARCPolicy.self, maximumSlots: 3)
        #expect(tier.store(value(300), forKey: try CacheKey("a")) == .stored)
        #expect(tier.store(value(300), forKey: try CacheKey("b")) == .stored)
        #expect(tier.entry(forKey: try CacheKey("a")) != nil, "a hit: ARC keeps it as frequent")
        #expect(tier.store(value(300), forKey: try CacheKey("c")) == .stored)
        #expect(tier.entry(forKey: try CacheKey("b")) == nil, "c evicted b, which ARC remembers")
        guard case .refused(.outOfSpace) = tier.store(value(300), forKey: try CacheKey("d")) else {
            Issue.record("d found a slot while a, b and c held all three")
            return
        }
        #expect(tier.store(value(300), forKey: try CacheKey("b")) == .stored, "b's remembered slot serves it")
    }
}
