import Foundation
import Testing
import TierCache
import TierCacheEviction

/// MemoryTier's eviction policies against their reference implementation and their own rules.
@Suite("MemoryTier eviction policies")
struct MemoryTierPolicyTests {
    /// Zipf(0.9) ids over `objects` ids (inverse-CDF sampling, a fixed SplitMix64 stream; the same
    /// generator as CacheSimulationTests' equivalence test). Keys are `k` + 8 digits.
    static func zipf(objects: Int, requests: Int) -> [UInt32] {
        func mix(_ id: UInt32) -> UInt64 {
            var x = UInt64(id) &* 0x9E37_79B9_7F4A_7C15
            x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
            return x ^ (x >> 31)
        }
        var cumulative: [Double] = []
        var sum = 0.0
        for rank in 1...objects {
            sum += 1 / pow(Double(rank), 0.9)
            cumulative.append(sum)
        }
        var state: UInt64 = 0x1234_5678
        return (0..<requests).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            let uniform = Double(mix(UInt32(truncatingIfNeeded: state >> 20)) >> 11) / Double(1 << 53) * sum
            var low = 0
            var high = objects - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] < uniform { low = middle + 1 } else { high = middle }
            }
            return UInt32((low &* 7_919) % objects)
        }
    }

    static func valueSize(_ id: UInt32, variable: Bool) -> Int {
        guard variable else { return 1 }
        var x = UInt64(id ^ 0x5A5A) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return 1 + Int((x ^ (x >> 31)) % 2_048)
    }

    /// Replays the trace as a cache user does (a lookup; a store on a miss); returns the hits.
    static func hits(policy: MemoryTier.EvictionPolicy, capacity: Int, variable: Bool) throws -> Int {
        let tier = try MemoryTier(.init(capacity: capacity, maxEntryFraction: 1, policy: policy))
        var hits = 0
        for id in zipf(objects: 5_000, requests: 60_000) {
            let digits = String(id)
            let key = try CacheKey("k" + String(repeating: "0", count: 8 - digits.count) + digits)
            if tier.entry(forKey: key) != nil {
                hits += 1
            } else {
                let value = [UInt8](repeating: 1, count: valueSize(id, variable: variable))
                _ = tier.store(CacheEntry(value: value, storedAt: Date(timeIntervalSince1970: 0)), forKey: key)
            }
        }
        return hits
    }

    /// Hit counts of libCacheSim (pip `libcachesim` 0.3.5: `S3FIFO(cache_size:)`, `LRU(cache_size:)`,
    /// `get` of a request per line) on the same trace with each object's size set to the tier's
    /// cost of its entry (value + 9 key bytes + 64): the tier must reach exactly these.
    @Test(
        "S3-FIFO and LRU hit exactly as libCacheSim's on a Zipf trace",
        arguments: [
            // (policy, capacity, variable sizes, libCacheSim's hits)
            (MemoryTier.EvictionPolicy.s3fifo, 7_400, false, 25_750),
            (.s3fifo, 51_800, false, 39_525),
            (.s3fifo, 307_200, true, 32_379),
            (.s3fifo, 2_097_152, true, 47_640),
            (.lru, 7_400, false, 18_632),
            (.lru, 307_200, true, 26_810),
        ])
    func libCacheSimHits(policy: MemoryTier.EvictionPolicy, capacity: Int, variable: Bool, expected: Int) throws {
        #expect(try Self.hits(policy: policy, capacity: capacity, variable: variable) == expected)
    }

    @Test("S3-FIFO keeps an entry hit twice and lets one-hit wonders go, then remembers them in its ghost")
    func s3fifoSmallQueue() throws {
        // Each entry costs 1 + 2 + 64 = 67 bytes; capacity 680 holds 10. The small queue's share
        // is 68 bytes, the main queue's 612, the ghost's 612 (libCacheSim's 10% / 90% / 90%).
        let tier = try MemoryTier(.init(capacity: 680, maxEntryFraction: 0.1, policy: .s3fifo))
        // Before the first eviction, new entries go to the small queue until it holds its share:
        // a0 and a1 (67 < 68 after a0), then a2...a9 to the main queue.
        for index in 0..<10 { #expect(tier.store(entry(1), forKey: key("a\(index)")) == .stored) }
        // Two hits make a0 eligible for the main queue.
        _ = tier.entry(forKey: key("a0"))
        _ = tier.entry(forKey: key("a0"))
        // b0 needs room; main (536 B) is within its share, so the small queue is evicted from:
        // a0 (hit twice) moves to main, a1 (never hit) leaves for the ghost.
        _ = tier.store(entry(1), forKey: key("b0"))
        #expect(tier.entry(forKey: key("a0")) != nil)
        #expect(tier.entry(forKey: key("a1")) == nil)
        #expect(tier.statistics().evictions == 1)
        // b1 needs room; main (603 B) is within its share, so b0 (never hit) leaves for the ghost.
        _ = tier.store(entry(1), forKey: key("b1"))
        #expect(tier.entry(forKey: key("b0")) == nil)
        // Stored again, b0 is remembered by the ghost and enters the main queue (b1 leaves).
        _ = tier.store(entry(1), forKey: key("b0"))
        #expect(tier.keysByRecency.first?.rawValue == "b0", "an entry remembered by the ghost enters the main queue")
        #expect(tier.entry(forKey: key("b1")) == nil)
        #expect(tier.usage() == TierUsage(bytes: 670, entries: 10, capacity: 680, maxEntryBytes: 67))
    }

    @Test("S3-FIFO refuses an entry as large as its small queue, whatever the entry-size fraction")
    func s3fifoLargestEntry() throws {
        let tier = try MemoryTier(.init(capacity: 10_000, maxEntryFraction: 1, policy: .s3fifo))
        #expect(tier.usage().maxEntryBytes == 999)
        let overhead = MemoryTier.perEntryOverhead + 1
        #expect(tier.store(entry(999 - overhead), forKey: key("k")) == .stored)
        #expect(tier.store(entry(1_000 - overhead), forKey: key("k")) == .refused(.tooLarge(size: 1_000, limit: 999)))
        let lru = try MemoryTier(.init(capacity: 10_000, maxEntryFraction: 1, policy: .lru))
        #expect(lru.usage().maxEntryBytes == 10_000)
    }

    @Test(
        "LIRS keeps out, on its first store, an entry larger than the room its LIR set leaves; stored again soon, it is admitted"
    )
    func lirsLargeEntry() throws {
        let tier = try MemoryTier(capacity: 10_000, policy: .lirs)
        // 99 entries of cost 100 (a 3-byte key, 33 bytes of value, the overhead) fill the LIR set
        // to 9,900 of the 10,000 bytes.
        let small = 100 - 3 - MemoryTier.perEntryOverhead
        for index in 0..<99 {
            #expect(tier.store(entry(small), forKey: key(String(format: "a%02d", index))) == .stored)
        }
        let large = 400 - 3 - MemoryTier.perEntryOverhead
        #expect(tier.store(entry(large), forKey: key("big")) == .refused(.notAdmitted(policy: "LIRS")))
        #expect(tier.entry(forKey: key("big")) == nil)
        // Remembered by its first store, the second admits it (as LIR): a scan of large entries
        // seen once does not push the hot set out.
        #expect(tier.store(entry(large), forKey: key("big")) == .stored)
        #expect(tier.entry(forKey: key("big"))?.value.count == large)
        #expect(tier.usage().bytes <= 10_000)
        let statistics = tier.statistics()
        #expect(statistics.refusedNotAdmitted == 1 && statistics.refusedOutOfSpace == 0)
        #expect(statistics.stores == 100)
    }

    @Test("A store the policy does not admit is refused, counted and not readable, and the key's older entry is gone")
    func policyAdmitsNothing() throws {
        let tier = try MemoryTier(capacity: 10_000, policyType: AdmitsOnSecondStore.self)
        #expect(tier.store(entry(10), forKey: key("k")) == .refused(.notAdmitted(policy: AdmitsOnSecondStore.name)))
        #expect(tier.entry(forKey: key("k")) == nil)
        #expect(tier.store(entry(10), forKey: key("k")) == .stored)
        #expect(tier.entry(forKey: key("k"))?.value.count == 10)
        // Stored again at another cost: the old entry is taken out, and the new one not admitted.
        #expect(tier.store(entry(20), forKey: key("k")) != .stored)
        #expect(tier.entry(forKey: key("k")) == nil)
        let statistics = tier.statistics()
        #expect(statistics.stores == 1)
        #expect(statistics.refusedNotAdmitted == 2 && statistics.refusedOutOfSpace == 0)
        #expect(tier.usage().entries == 0)
    }

    /// The keys' hash seeds: the tier's own hash is seeded per process, which would make the
    /// sketch's collisions, and so the outcome, differ from run to run; these make it the same
    /// every run, over several seeds.
    static let hashSeeds: [UInt64] = Array(0..<8)

    /// A seeded hash of `key`'s text: its stable digest, mixed with `seed` by SplitMix64.
    static func seededHash(_ key: CacheKey, seed: UInt64) -> UInt64 {
        var mixer = SplitMix64(seed: KeyDigest.words(of: key.rawValue.utf8).0 ^ seed)
        return mixer.next()
    }

    @Test("W-TinyLFU keeps frequent entries through a scan of one-time keys; LRU does not", arguments: hashSeeds)
    func wTinyLFUScan(seed: UInt64) throws {
        func hotHitsAfterScan(_ policy: MemoryTier.EvictionPolicy) throws -> Int {
            // 200 entries of 1 + 7 + 64 = 72 bytes.
            let tier = try MemoryTier(
                .init(capacity: 200 * 72, maxEntryFraction: 1, policy: policy),
                keyHash: { Self.seededHash($0, seed: seed) })
            func request(_ name: String) -> Bool {
                if tier.entry(forKey: key(name)) != nil { return true }
                _ = tier.store(entry(1), forKey: key(name))
                return false
            }
            for index in 0..<150 { _ = request("w\(String(100_000 + index))") }
            let hot = (0..<30).map { "h\(String(100_000 + $0))" }
            for _ in 0..<3 { for name in hot { _ = request(name) } }
            for index in 0..<1_000 { _ = request("s\(String(100_000 + index))") }
            return hot.filter { request($0) }.count
        }
        #expect(try hotHitsAfterScan(.wTinyLFU) >= 27)
        #expect(try hotHitsAfterScan(.lru) == 0)
    }

    @Test(
        "Replacing an entry's value keeps the key and accounts the new size",
        arguments: MemoryTier.EvictionPolicy.allCases)
    func replace(policy: MemoryTier.EvictionPolicy) throws {
        let tier = try MemoryTier(.init(capacity: 10_000, maxEntryFraction: 0.05, policy: policy))
        for index in 0..<50 { _ = tier.store(entry(100), forKey: key("k\(index)")) }
        #expect(tier.store(entry(300, byte: 9), forKey: key("k49")) == .stored)
        #expect(tier.entry(forKey: key("k49"))?.value == [UInt8](repeating: 9, count: 300))
        // The usage is the sum of the resident entries' costs: value + key + overhead.
        let residents = tier.keysByRecency
        let expected = residents.reduce(0) { sum, key in
            sum + (key.rawValue == "k49" ? 300 : 100) + key.rawValue.utf8.count + MemoryTier.perEntryOverhead
        }
        #expect(residents.contains(key("k49")))
        #expect(
            tier.usage() == TierUsage(bytes: expected, entries: residents.count, capacity: 10_000, maxEntryBytes: 500))
    }

    @Test("Many tasks reading and writing keep every limit", arguments: MemoryTier.EvictionPolicy.allCases)
    func concurrentUse(policy: MemoryTier.EvictionPolicy) async throws {
        let tier = try MemoryTier(.init(capacity: 20_000, maxEntryCount: 120, policy: policy))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<2_000 {
                        let name = "k\((index * 31 + worker * 7) % 400)"
                        if tier.entry(forKey: key(name)) == nil {
                            _ = tier.store(entry(index % 200), forKey: key(name))
                        }
                        if index % 97 == 0 { tier.removeEntry(forKey: key(name)) }
                    }
                }
            }
        }
        let usage = tier.usage()
        #expect(usage.bytes <= 20_000 && usage.entries <= 120)
        #expect(usage.entries == tier.keysByRecency.count)
        let statistics = tier.statistics()
        #expect(statistics.hits + statistics.misses == 16_000)
        tier.removeAll()
        #expect(
            tier.usage() == TierUsage(bytes: 0, entries: 0, capacity: 20_000, maxEntryBytes: tier.usage().maxEntryBytes)
        )
    }
}

/// Admits an object on its second request only (a doorkeeper): a legal policy whose first store
/// of a key is not admitted. The doorkeeper remembers the last 64 objects seen once.
struct AdmitsOnSecondStore: EvictionPolicy {
    static let name = "admits on the second store"
    private static let doorkeeperSize = 64
    private var lru: LRUPolicy
    /// The objects seen once, oldest first.
    private var seen: [UInt32] = []
    private var forgotten: [UInt32] = []
    init(context: PolicyContext) { lru = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        forgotten = []
        guard lru.isResident(slot) || unsee(slot) else {
            seen.append(slot)
            if seen.count > Self.doorkeeperSize { forgotten.append(seen.removeFirst()) }
            return false
        }
        return lru.access(slot, size: size, keyHash: keyHash, position: position)
    }
    /// Takes `slot` out of the doorkeeper; true if it was there.
    private mutating func unsee(_ slot: UInt32) -> Bool {
        guard let index = seen.firstIndex(of: slot) else { return false }
        seen.remove(at: index)
        return true
    }
    mutating func remove(_ slot: UInt32) {
        lru.remove(slot)
        _ = unsee(slot)
        forgotten = [slot]
    }
    mutating func removeAll() {
        lru.removeAll()
        seen.removeAll()
    }
    func isResident(_ slot: UInt32) -> Bool { lru.isResident(slot) }
    func remembers(_ slot: UInt32) -> Bool { lru.remembers(slot) || seen.contains(slot) }
    var departures: ArraySlice<UInt32> { lru.departures + forgotten }
    var largestAdmissibleSize: UInt64 { lru.largestAdmissibleSize }
    var residentsByRetention: [UInt32] { lru.residentsByRetention }
}
