import Foundation
import TierCache

extension TierConformanceSuite.Context {
    /// Lookups, stores and refusals show in the tier's counters: the benchmark suite's per-tier
    /// tables and an app's metrics are made of them, and a tier whose counters stay at zero reports
    /// a hit ratio of nothing. The contract lets a tier count approximately (relaxed counters,
    /// sampling), so each counter must move, and by no more than what happened.
    func statistics() async throws {
        let tier = try await makeTier(directory)
        let before = await tier.statistics()
        var stores = 0
        for index in 0..<3 {
            if try await store(entry([UInt8(index)]), forKey: key("counted-\(index)"), in: tier) == .stored {
                stores += 1
            }
        }
        // Three hits to one miss: with as many of each, a tier that counted each lookup as the
        // other passed.
        var hits = 0, misses = 0
        for name in ["counted-0", "counted-1", "counted-2", "absent-0"] {
            if try await tier.entry(forKey: key(name)) != nil { hits += 1 } else { misses += 1 }
        }
        let expired = try await tier.store(entry([9], expiresAt: .distantPast), forKey: key("expired"))
        try expect(expired == .refused(.alreadyExpired), "storing an expired entry gave \(expired)")
        let after = await tier.statistics()
        let counted: [(name: String, moved: Int, happened: Int)] = [
            ("hits", after.hits - before.hits, hits),
            ("misses", after.misses - before.misses, misses),
            ("stores", after.stores - before.stores, stores),
            ("refusedExpired", after.refusedExpired - before.refusedExpired, 1),
        ]
        for (name, moved, happened) in counted {
            try expect(
                moved >= 1 && moved <= happened,
                "\(name) moved by \(moved) over \(happened) such operations (counted from 1 to \(happened) passes)")
        }
    }
}
