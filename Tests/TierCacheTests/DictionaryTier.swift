import Foundation
@_spi(TierCacheInternals) import TierCache

/// A tier written the way the README's "plugging in your own store" section shows a user writing
/// one: a dictionary with first-in-first-out eviction. The conformance suite runs against it.
final class DictionaryTier: LocalCacheTier {
    let name: String
    let medium: TierMedium
    private let capacity: Int
    private let maxEntryBytes: Int
    private let counters: TierCounters
    private let clock: CacheClock
    /// Whether a read checks the entry's expiry (a tier that checks it only when storing breaks
    /// the contract: the conformance suite's test of itself turns it off).
    private let checksExpiryOnRead: Bool
    // A user's own tier would hold this in a `Synchronization.Mutex`; `Locked` is that `Mutex`,
    // except under scripts/tsan, where it is a lock ThreadSanitizer can see on Linux.
    private let state = Locked<(entries: [CacheKey: CacheEntry], order: [CacheKey], bytes: Int)>(([:], [], 0))

    init(
        name: String = "dictionary", medium: TierMedium = .disk, capacity: Int, clock: CacheClock = .system,
        checksExpiryOnRead: Bool = true
    ) {
        self.clock = clock
        self.checksExpiryOnRead = checksExpiryOnRead
        self.name = name
        self.medium = medium
        self.capacity = capacity
        self.maxEntryBytes = capacity / 20
        // Named counters also feed the app's metrics backend, as the shipped tiers' do.
        self.counters = TierCounters(tierName: name)
    }

    func entry(forKey key: CacheKey) -> CacheEntry? {
        let found = state.withLock { $0.entries[key] }.flatMap {
            checksExpiryOnRead && $0.metadata.isExpired(at: clock.now()) ? nil : $0
        }
        counters.recordLookup(hit: found != nil)
        return found
    }

    func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        let outcome: StoreOutcome =
            entry.size > maxEntryBytes
            ? .refused(.tooLarge(size: entry.size, limit: maxEntryBytes))
            : entry.metadata.isExpired(at: clock.now()) ? .refused(.alreadyExpired) : .stored
        let evicted = state.withLock { state -> Int in
            if let old = state.entries.removeValue(forKey: key) {
                state.bytes -= old.size
                state.order.removeAll { $0 == key }
            }
            guard outcome == .stored else { return 0 }
            var evicted = 0
            while state.bytes + entry.size > capacity, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.bytes -= state.entries.removeValue(forKey: oldest)?.size ?? 0
                evicted += 1
            }
            state.entries[key] = entry
            state.order.append(key)
            state.bytes += entry.size
            return evicted
        }
        counters.record(outcome)
        counters.recordEvictions(evicted)
        return outcome
    }

    func removeEntry(forKey key: CacheKey) {
        state.withLock { state in
            guard let old = state.entries.removeValue(forKey: key) else { return }
            state.bytes -= old.size
            state.order.removeAll { $0 == key }
        }
    }

    func removeAll() { state.withLock { $0 = ([:], [], 0) } }

    func usage() -> TierUsage {
        state.withLock {
            TierUsage(bytes: $0.bytes, entries: $0.entries.count, capacity: capacity, maxEntryBytes: maxEntryBytes)
        }
    }

    func statistics() -> TierStatistics { counters.snapshot(usage: usage()) }
}
