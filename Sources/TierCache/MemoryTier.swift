
/// An in-memory tier: least-recently-used eviction by bytes, with an optional entry-count limit.
///
/// Lookups, stores and removals are O(1) and hold one lock briefly; the hit path takes the lock,
/// finds the entry in a dictionary, relinks it at the front of the recency list and returns the
/// entry (its bytes are shared copy-on-write, not copied).
///
/// ## Capacity
/// Each entry costs its value's size, plus its key's UTF-8 size, plus ``perEntryOverhead`` bytes
/// for bookkeeping. The sum never exceeds ``Configuration/capacity``: a store that would exceed
/// it first evicts least-recently-used entries.
///
/// ## The entry-size rule
/// Like the disk tier, the memory tier refuses an entry whose cost exceeds
/// ``Configuration/maxEntryFraction`` of its capacity, by default the same 5%. One large entry
/// admitted to a small memory tier would evict most of the hot set for a value that is rarely hot
/// itself; refusing it keeps the tier's hit ratio, and the disk tier below still holds the entry
/// when it fits there. Raise the fraction for tiers that cache a few large objects.
public final class MemoryTier: LocalCacheTier {
    /// The memory tier's settings.
    public struct Configuration: Sendable {
        /// The most bytes the tier holds (entries' costs, see ``MemoryTier``). Must be positive.
        public var capacity: Int
        /// The most entries the tier holds, or `nil` for no limit beyond bytes.
        public var maxEntryCount: Int?
        /// The largest entry accepted, as a fraction of ``capacity``; 0.05 by default.
        public var maxEntryFraction: Double
        /// The name in statistics.
        public var name: String
        /// The source of "now" for expiry hints.
        public var clock: CacheClock

        public init(
            capacity: Int,
            maxEntryCount: Int? = nil,
            maxEntryFraction: Double = EntrySizeLimit.urlCacheDefaultFraction,
            name: String = "memory",
            clock: CacheClock = .system
        ) {
            self.capacity = capacity
            self.maxEntryCount = maxEntryCount
            self.maxEntryFraction = maxEntryFraction
            self.name = name
            self.clock = clock
        }
    }

    /// Bytes counted for each entry besides its key and value: the dictionary slot, the list node
    /// and the entry's metadata.
    public static let perEntryOverhead = 64

    public let name: String
    public var medium: TierMedium { .memory }

    private let capacity: Int
    private let maxEntryCount: Int
    private let sizeLimit: EntrySizeLimit
    private let clock: CacheClock
    private let counters = TierCounters()
    private let lru = Locked(LRUList<CacheKey, CacheEntry>())

    /// Creates a memory tier, or throws ``TierCacheError/Code/invalidConfiguration`` for a
    /// capacity or count that is not positive or a fraction outside `(0, 1]`.
    public init(_ configuration: Configuration) throws(TierCacheError) {
        guard configuration.capacity > 0 else {
            throw TierCacheError(
                .invalidConfiguration, "capacity must be positive; got \(configuration.capacity)")
        }
        if let count = configuration.maxEntryCount, count <= 0 {
            throw TierCacheError(.invalidConfiguration, "maxEntryCount must be positive; got \(count)")
        }
        self.name = configuration.name
        self.capacity = configuration.capacity
        self.maxEntryCount = configuration.maxEntryCount ?? .max
        self.sizeLimit = try EntrySizeLimit(
            fraction: configuration.maxEntryFraction, capacity: configuration.capacity)
        self.clock = configuration.clock
    }

    /// Creates a memory tier holding at most `capacity` bytes.
    public convenience init(capacity: Int, maxEntryCount: Int? = nil) throws(TierCacheError) {
        try self.init(Configuration(capacity: capacity, maxEntryCount: maxEntryCount))
    }

    @inline(__always)
    private static func cost(of entry: CacheEntry, key: CacheKey) -> Int {
        entry.value.count + key.rawValue.utf8.count + perEntryOverhead
    }

    public func entry(forKey key: CacheKey) -> CacheEntry? {
        let found = lru.withLock { lru -> CacheEntry? in
            guard let entry = lru.touch(key) else { return nil }
            if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) {
                lru.remove(key)
                counters.expirations.add(1, ordering: .relaxed)
                return nil
            }
            return entry
        }
        counters.recordLookup(hit: found != nil)
        return found
    }

    public func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        let cost = Self.cost(of: entry, key: key)
        let outcome: StoreOutcome
        if !sizeLimit.admits(cost) {
            outcome = .refused(.tooLarge(size: cost, limit: sizeLimit.maxBytes))
        } else if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) {
            outcome = .refused(.alreadyExpired)
        } else {
            outcome = .stored
        }
        let evicted = lru.withLock { lru -> Int in
            guard outcome == .stored else {
                lru.remove(key)
                return 0
            }
            lru.set(entry, cost: cost, for: key)
            var evicted = 0
            while lru.totalCost > capacity || lru.count > maxEntryCount {
                guard lru.removeLeastRecentlyUsed() != nil else { break }
                evicted += 1
            }
            return evicted
        }
        counters.record(outcome)
        if evicted > 0 { counters.evictions.add(evicted, ordering: .relaxed) }
        return outcome
    }

    public func removeEntry(forKey key: CacheKey) {
        _ = lru.withLock { $0.remove(key) }
    }

    public func removeAll() {
        lru.withLock { $0.removeAll() }
    }

    public func usage() -> TierUsage {
        let (bytes, entries) = lru.withLock { ($0.totalCost, $0.count) }
        return TierUsage(bytes: bytes, entries: entries, capacity: capacity, maxEntryBytes: sizeLimit.maxBytes)
    }

    public func statistics() -> TierStatistics {
        counters.snapshot(usage: usage())
    }

    /// Keys from most to least recently used. O(n); for tests and diagnostics.
    public var keysByRecency: [CacheKey] {
        lru.withLock { $0.keysByRecency }
    }
}
