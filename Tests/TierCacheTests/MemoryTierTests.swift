import Foundation
import Synchronization
import Testing
import TierCache
import TierCacheTesting

/// A key from a literal the test chose; literals are never empty or overlong.
func key(_ text: String) -> CacheKey {
    guard let key = try? CacheKey(text) else { preconditionFailure("invalid test key \(text)") }
    return key
}
func entry(_ size: Int, byte: UInt8 = 1, expiresAt: Date? = nil) -> CacheEntry {
    CacheEntry(
        value: [UInt8](repeating: byte, count: size), storedAt: Date(timeIntervalSince1970: 0), expiresAt: expiresAt)
}

@Suite("MemoryTier")
struct MemoryTierTests {
    @Test("Evicts the least recently used entry first")
    func lruOrder() throws {
        // Each entry costs 100 + 2 (key) + 64 (overhead) = 166 bytes; four fit in 700.
        let tier = try MemoryTier(.init(capacity: 700, maxEntryFraction: 1))
        for name in ["k1", "k2", "k3", "k4"] { #expect(tier.store(entry(100), forKey: key(name)) == .stored) }
        _ = tier.entry(forKey: key("k1"))  // k2 is now the least recently used
        _ = tier.store(entry(100), forKey: key("k5"))
        #expect(tier.entry(forKey: key("k2")) == nil)
        #expect(tier.entry(forKey: key("k1")) != nil)
        #expect(tier.keysByRecency.map(\.rawValue) == ["k1", "k5", "k4", "k3"])
        #expect(tier.statistics().evictions == 1)
    }

    @Test("Never holds more than its capacity or its entry-count limit", arguments: MemoryTier.EvictionPolicy.allCases)
    func limits(policy: MemoryTier.EvictionPolicy) throws {
        // Each entry weighs at least 10,000 / 20 = 500 for the policy: under S3-FIFO's small queue.
        let tier = try MemoryTier(.init(capacity: 10_000, maxEntryCount: 20, maxEntryFraction: 1, policy: policy))
        for index in 0..<100 {
            _ = tier.store(entry(index * 37 % 400), forKey: key("k\(index)"))
            let usage = tier.usage()
            #expect(usage.bytes <= 10_000 && usage.entries <= 20)
        }
        #expect(tier.usage().entries == 20)
    }

    @Test(
        "A tier bounded by its entry count alone (capacity Int.max) keeps the count; no policy overflows",
        arguments: MemoryTier.EvictionPolicy.allCases)
    func countOnlyTier(policy: MemoryTier.EvictionPolicy) throws {
        // Int.max counts as 2^60 bytes (the policies' largest capacity): each entry weighs 2^60 / 1,000
        // for the policy, within S3-FIFO's small queue. Figured from Int.max, the weight overflowed.
        let tier = try MemoryTier(.init(capacity: .max, maxEntryCount: 1_000, policy: policy))
        #expect(tier.usage().capacity == 1 << 60)
        #expect(tier.usage().maxEntryBytes == (try EntrySizeLimit(fraction: 0.05, capacity: 1 << 60)).maxBytes)
        for index in 0..<3_000 {
            _ = tier.store(entry(index % 50), forKey: key("k\(index % 1_500)"))
            _ = tier.entry(forKey: key("k\(index % 700)"))
            #expect(tier.usage().entries <= 1_000)
        }
        #expect(tier.usage().entries == 1_000)
    }

    @Test("A count limit that cannot bind (fewer bytes an entry than any entry costs) takes no bytes away")
    func looseCountLimit() throws {
        // 1,000 bytes and up to 501 entries: no entry costs less than 65 bytes, so at most 15 fit
        // whatever the limit, and the tier keeps all its bytes (weights of 1 once left it 501).
        for limit in [15, 16, 500, 501] {
            let tier = try MemoryTier(.init(capacity: 1_000, maxEntryCount: limit, maxEntryFraction: 1))
            for index in 0..<40 { _ = tier.store(entry(1), forKey: key("k\(index)")) }
            // Each entry costs 1 + 2 or 3 key bytes + 64: 14 of them fill 1,000 bytes.
            #expect(tier.usage().entries == min(limit, 14))
            #expect(tier.usage().bytes > 1_000 - 68)
        }
    }

    @Test(
        "One entry of nearly 2^60 bytes at a time: ARC's directory, LIRS's stack and W-TinyLFU's window stay in range",
        arguments: MemoryTier.EvictionPolicy.allCases)
    func oneHugeEntryAtATime(policy: MemoryTier.EvictionPolicy) throws {
        let configuration = MemoryTier.Configuration(capacity: .max - 1, maxEntryCount: 1, policy: policy)
        guard policy != .s3fifo, policy != .twoQ else {
            // S3-FIFO admits nothing as large as its small queue, 2Q nothing larger than A1in: a
            // typed error, as for any capacity.
            let error = #expect(throws: TierCacheError.self) { try MemoryTier(configuration) }
            #expect(error?.code == .invalidConfiguration)
            return
        }
        let tier = try MemoryTier(configuration)
        // The sequence that overflowed ARC's directory, and LIRS's stack on its third key.
        for (name, looksUp) in [
            ("a", false), ("b", false), ("b", true), ("c", false), ("d", false), ("d", true), ("e", false),
        ] {
            if looksUp {
                #expect(tier.entry(forKey: key(name)) != nil)
            } else {
                #expect(tier.store(entry(10), forKey: key(name)) == .stored)
            }
            #expect(tier.usage().entries == 1)
        }
        #expect(tier.entry(forKey: key("e")) != nil)
    }

    @Test(
        "The entry-size limit of any capacity is floor(capacity × fraction) exactly, at most the capacity, never a trap"
    )
    func entrySizeLimitOfHugeCapacities() throws {
        // Double(Int.max) is 2^63, which Int cannot hold: the whole capacity, not a trap.
        #expect(try EntrySizeLimit(fraction: 1, capacity: .max).maxBytes == .max)
        #expect(try EntrySizeLimit(fraction: 0.5, capacity: .max).maxBytes == Int.max / 2)
        // 2^54 + 3 rounds up to 2^54 + 4 as a Double: the limit stays at the capacity.
        #expect(try EntrySizeLimit(fraction: 1, capacity: (1 << 54) + 3).maxBytes == (1 << 54) + 3)
        #expect(try EntrySizeLimit(fraction: 0.05, capacity: 100_000).maxBytes == 5_000)
        #expect(try EntrySizeLimit(fraction: 0.05, capacity: 99).maxBytes == 4)
        // 5% is capacity / 20 exactly at every size (a Double product was 4 bytes over at 2^60, the
        // capacity of a tier bounded by its entry count alone, and off from about 2^55 up).
        for capacity in [1 << 60, 72_057_594_037_927_955, Int.max, (1 << 53) + 19] {
            #expect(try EntrySizeLimit(fraction: 0.05, capacity: capacity).maxBytes == capacity / 20, "\(capacity)")
        }
        #expect(try EntrySizeLimit(fraction: 0.3, capacity: 10).maxBytes == 3)
        // Fractions that are not whole billionths: a product rounded down, never 0 for a tiny one
        // of a huge capacity.
        #expect(try EntrySizeLimit(fraction: 1.0 / 3, capacity: 300).maxBytes == 100)
        #expect(try EntrySizeLimit(fraction: 1e-12, capacity: 1 << 60).maxBytes == 1_152_921)
    }

    @Test("An entry-count limit too small for the policy to admit any entry is a typed error")
    func countLimitTooSmallForPolicy() {
        // S3-FIFO admits nothing as large as its small queue (10%); each entry would weigh 20%.
        let error = #expect(throws: TierCacheError.self) {
            try MemoryTier(.init(capacity: 10_000, maxEntryCount: 5, policy: .s3fifo))
        }
        #expect(error?.code == .invalidConfiguration)
        #expect((try? MemoryTier(.init(capacity: 10_000, maxEntryCount: 5, policy: .lru))) != nil)
    }

    @Test(
        "Refuses an entry over its share of capacity, exactly at the limit",
        arguments: MemoryTier.EvictionPolicy.allCases)
    func entrySizeRule(policy: MemoryTier.EvictionPolicy) throws {
        let tier = try MemoryTier(capacity: 100_000, policy: policy)  // 5% = 5,000 bytes of cost
        let limit = tier.usage().maxEntryBytes
        #expect(limit == 5_000)
        let overhead = MemoryTier.perEntryOverhead + 1  // key "k"
        #expect(tier.store(entry(limit - overhead), forKey: key("k")) == .stored)
        #expect(
            tier.store(entry(limit - overhead + 1), forKey: key("k"))
                == .refused(.tooLarge(size: limit + 1, limit: limit)))
        #expect(tier.entry(forKey: key("k")) == nil, "a refused store removes the older entry")
        #expect(tier.statistics().refusedTooLarge == 1)
    }

    @Test(
        "Entries past their expiry hint are misses, by the injected clock",
        arguments: MemoryTier.EvictionPolicy.allCases)
    func expiry(policy: MemoryTier.EvictionPolicy) throws {
        let clock = ManualCacheClock()
        let tier = try MemoryTier(.init(capacity: 10_000, policy: policy, clock: clock.cacheClock))
        _ = tier.store(entry(10, expiresAt: clock.now.addingTimeInterval(60)), forKey: key("k"))
        #expect(tier.entry(forKey: key("k")) != nil)
        clock.advance(by: 61)
        #expect(tier.entry(forKey: key("k")) == nil)
        let statistics = tier.statistics()
        #expect(statistics.expirations == 1 && statistics.hits == 1 && statistics.misses == 1)
    }

    @Test("The smallest capacity that admits the smallest entry stores it")
    func smallestCapacity() throws {
        let tier = try MemoryTier(capacity: 1_300)  // 5%: 65 bytes, the overhead and a one-byte key
        #expect(tier.store(CacheEntry(value: [], storedAt: Date()), forKey: key("k")) == .stored)
    }

    @Test(
        "Rejects capacities, counts and fractions out of range",
        arguments: [
            MemoryTier.Configuration(capacity: 0),
            MemoryTier.Configuration(capacity: -5),
            MemoryTier.Configuration(capacity: 100, maxEntryCount: 0),
            MemoryTier.Configuration(capacity: 100, maxEntryFraction: 0),
            MemoryTier.Configuration(capacity: 100, maxEntryFraction: 1.5),
            // Whose largest entry is smaller than the smallest: 5% of 1,299 bytes is 64.
            MemoryTier.Configuration(capacity: 1_299),
            MemoryTier.Configuration(capacity: 100, maxEntryFraction: .nan),
        ])
    func invalidConfiguration(_ configuration: MemoryTier.Configuration) {
        #expect(throws: TierCacheError.self) { try MemoryTier(configuration) }
        do {
            _ = try MemoryTier(configuration)
        } catch {
            #expect(error.code == .invalidConfiguration)
        }
    }
}

@Suite("StoragePolicyTable")
struct StoragePolicyTableTests {
    @Test func mapsSchemesCaseInsensitivelyWithADefault() throws {
        var table = StoragePolicyTable(["HTTPS": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed)
        #expect(table.policy(for: try #require(URL(string: "https://a.example/x"))) == .allowed)
        #expect(table.policy(for: try #require(URL(string: "HTTP://a.example/x"))) == .allowedInMemoryOnly)
        #expect(table.policy(for: try #require(URL(string: "ftp://a.example/x"))) == .notAllowed)
        #expect(table.policy(for: try #require(URL(string: "relative/path"))) == .notAllowed)
        table["ftp"] = .allowed
        #expect(table.policy(forScheme: "FTP") == .allowed)
        #expect(StoragePolicyTable.standard.policy(forScheme: "http") == .allowedInMemoryOnly)
    }

    /// Schemes differing only in case are one scheme, with the narrower policy: the dictionary's
    /// order, which differs from run to run and table to table, does not choose.
    @Test func schemesDifferingInCaseGetTheNarrowerPolicy() {
        for _ in 0..<200 {
            let table = StoragePolicyTable(
                ["HTTPS": .notAllowed, "https": .allowed, "Https": .allowedInMemoryOnly, "ftp": .allowed])
            #expect(table.policy(forScheme: "https") == .notAllowed)
            #expect(table.policy(forScheme: "FTP") == .allowed)
        }
        #expect(
            StoragePolicyTable(["http": .allowed, "HTTP": .allowedInMemoryOnly]).policy(forScheme: "http")
                == .allowedInMemoryOnly)
    }

    @Test func policiesPermitMedia() {
        #expect(StoragePolicy.allowed.permits(.remote))
        #expect(StoragePolicy.allowedInMemoryOnly.permits(.memory))
        #expect(!StoragePolicy.allowedInMemoryOnly.permits(.disk))
        #expect(!StoragePolicy.notAllowed.permits(.memory))
    }
}

@Suite("CacheEntry memo")
struct CacheEntryMemoTests {
    final class Decoded: Sendable {
        let text: String
        init(_ text: String) { self.text = text }
    }
    final class Other: Sendable {}

    @Test("Copies share the memo; it is written once, typed, and emptied when the value changes")
    func sharing() throws {
        let original = entry(10)
        var copy = original
        #expect(copy.memo.value(as: Decoded.self) == nil)
        original.memo.setIfEmpty(Decoded("first"))
        original.memo.setIfEmpty(Decoded("second"))
        #expect(copy.memo.value(as: Decoded.self)?.text == "first", "a copy sees it; a second write is ignored")
        #expect(copy.memo.value(as: Other.self) == nil, "only a value of the type asked for")
        copy.value = [1, 2, 3]
        #expect(copy.memo.value(as: Decoded.self) == nil, "new bytes, new memo")
        #expect(original.memo.value(as: Decoded.self)?.text == "first")
        #expect(original == entry(10), "the memo is not part of equality")
    }

    @Test("Bytes changed in place get a new memo and leave every copy as it was")
    func changingInPlace() {
        let original = entry(3, byte: 7)
        original.memo.setIfEmpty(Decoded("old bytes"))
        var changed = original
        changed.value.append(9)
        changed.value[0] = 1
        #expect(changed.value == [1, 7, 7, 9])
        #expect(original.value == [7, 7, 7], "a copy's bytes are copied on write, not shared")
        #expect(changed.memo.value(as: Decoded.self) == nil, "new bytes, new memo")
        #expect(changed.memo !== original.memo)
        #expect(original.memo.value(as: Decoded.self)?.text == "old bytes")
        #expect(changed != original)
        var emptied = original, alsoEmptied = original
        emptied.value.removeAll()
        alsoEmptied.value.removeAll()
        #expect(emptied.size == 0 && alsoEmptied.size == 0)
        #expect(emptied.memo !== alsoEmptied.memo, "each change ends with a memo of its own")
    }

    @Test("An entry's own bytes are changed where they lie, not copied")
    func changingOwnBytes() {
        var unique = entry(4, byte: 7)
        let before = unique.value.withUnsafeBufferPointer { $0.baseAddress }
        unique.value[0] = 2
        #expect(unique.value.withUnsafeBufferPointer { $0.baseAddress } == before)
        #expect(unique.value == [2, 7, 7, 7])
    }

    @Test("A memory tier hands out entries that share its memo, and a memo frees its value with the entry")
    func lifetime() throws {
        let tier = try MemoryTier(capacity: 1 << 20)
        weak var observed: Decoded?
        do {
            let stored = entry(10)
            _ = tier.store(stored, forKey: key("k"))
            let decoded = Decoded("d")
            observed = decoded
            try #require(tier.entry(forKey: key("k"))).memo.setIfEmpty(decoded)
        }
        #expect(tier.entry(forKey: key("k"))?.memo.value(as: Decoded.self)?.text == "d")
        #expect(observed != nil)
        tier.removeAll()
        #expect(observed == nil, "evicting the entry releases what its memo held")
    }
}
