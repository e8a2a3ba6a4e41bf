import CoreMetrics
import Logging

/// An in-memory tier: eviction by bytes under a chosen policy (least recently used by default,
/// or S3-FIFO or W-TinyLFU), with an optional entry-count limit.
///
/// Lookups, stores and removals are O(1) and hold one lock briefly; the hit path takes the lock,
/// finds the entry in a dictionary, updates the policy's bookkeeping (for LRU, relinks it at the
/// front of the recency list) and returns the entry (its bytes are shared copy-on-write, not copied).
///
/// ## Eviction policy
/// ``EvictionPolicy`` names the policies. `tiercache tune` replays a trace through the simulator's
/// policies, and CacheSimulation's `PolicyKind.memoryTierConfiguration(capacityBytes:)` writes the
/// one line that configures its recommendation, e.g. `MemoryTier(capacity: 256 << 20, policy: .s3fifo)`.
/// Each policy here takes the same decisions as the simulator's policy of the same name (tests
/// replay traces through both and compare every hit), so the hit ratio the simulator reports in
/// byte mode, with each object's size set to its entry's cost, is the one this tier reaches.
///
/// ## Capacity
/// Each entry costs its value's size, plus its key's UTF-8 size, plus ``perEntryOverhead`` bytes
/// for bookkeeping. The sum never exceeds ``Configuration/capacity``: a store that would exceed
/// it first evicts entries as the policy chooses.
///
/// ## The entry-size rule
/// Like the disk tier, the memory tier refuses an entry whose cost exceeds
/// ``Configuration/maxEntryFraction`` of its capacity, by default the same 5%. One large entry
/// admitted to a small memory tier would evict most of the hot set for a value that is rarely hot
/// itself; refusing it keeps the tier's hit ratio, and the disk tier below still holds the entry
/// when it fits there. Raise the fraction for tiers that cache a few large objects. Under S3-FIFO
/// the limit is also below 10% of the capacity, whatever the fraction (see ``EvictionPolicy/s3fifo``).
public final class MemoryTier: LocalCacheTier {
    /// How a ``MemoryTier`` chooses the entries it evicts.
    ///
    /// All three are O(1) per request and bound the tier by bytes; they differ in what they keep.
    public enum EvictionPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Least recently used: evicts the entry unused for longest. Each hit relinks the entry at
        /// the front of a list. The default; best when recent use predicts the next use.
        case lru
        /// S3-FIFO (Yang et al., SOSP 2023): a small FIFO (10% of the capacity) that new entries
        /// must be hit in twice to reach the main FIFO, plus a ghost of recently evicted keys.
        /// Scan- and one-hit-wonder-resistant; a hit only bumps a 2-bit counter (no list is
        /// relinked). Costs: the ghost keeps keys (not values) of evicted entries, about as many as
        /// the tier holds, outside the byte budget; entries of 10% of the capacity or more are
        /// refused (one would flush the small queue).
        case s3fifo
        /// W-TinyLFU (Einziger, Friedman & Manes, 2017; Caffeine's policy): a small LRU window
        /// admits new entries, which then enter the main segmented LRU only if a frequency sketch
        /// says they are more popular than the entry they would evict. The window is sized by
        /// miniature simulation: a hashed sample of the keys (about 256 per miniature) replays
        /// through 14 small W-TinyLFU caches with windows from 1% to 100% (LRU), and the window
        /// follows the best of them when the evidence is significant, so recency-heavy workloads
        /// get LRU's hit ratio and frequency-skewed ones TinyLFU's. Costs: Caffeine's 4-bit
        /// count-min sketch (8 to 16 bytes per entry held, outside the byte budget), updated on
        /// every hit and store; every hit relinks the entry; the miniatures hold about
        /// 14 × 512 sampled keys (under 1 MB), and a tier of fewer than 512 entries
        /// replays every request through them. Like Caffeine's, the sketch (and the miniatures)
        /// start once the tier is half full. Unlike Caffeine's, the entry being stored is never the one its
        /// own store evicts (the tier's contract: a store is readable right after it).
        case wTinyLFU

        /// The policy as written in Swift (`.lru`, `.s3fifo`, `.wTinyLFU`).
        public var description: String {
            switch self {
            case .lru: ".lru"
            case .s3fifo: ".s3fifo"
            case .wTinyLFU: ".wTinyLFU"
            }
        }
    }

    /// The memory tier's settings.
    public struct Configuration: Sendable {
        /// The most bytes the tier holds (entries' costs, see ``MemoryTier``). Must be positive.
        public var capacity: Int
        /// The most entries the tier holds, or `nil` for no limit beyond bytes.
        public var maxEntryCount: Int?
        /// The largest entry accepted, as a fraction of ``capacity``; 0.05 by default.
        public var maxEntryFraction: Double
        /// How entries are chosen for eviction; ``EvictionPolicy/lru`` by default.
        public var policy: EvictionPolicy
        /// The name in statistics.
        public var name: String
        /// The source of "now" for expiry hints.
        public var clock: CacheClock
        /// Where the tier logs refusals (at `debug`); `nil`, the default, logs nothing.
        public var logger: Logger?
        /// Where the tier records its metrics (``MetricLabels``); `nil`, the default, means the
        /// factory the process bootstrapped when the tier is created (none: nothing recorded).
        public var metricsFactory: (any MetricsFactory)?

        /// A configuration; only the capacity (in bytes) is required.
        public init(
            capacity: Int,
            maxEntryCount: Int? = nil,
            maxEntryFraction: Double = EntrySizeLimit.urlCacheDefaultFraction,
            policy: EvictionPolicy = .lru,
            name: String = "memory",
            clock: CacheClock = .system,
            logger: Logger? = nil,
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.capacity = capacity
            self.maxEntryCount = maxEntryCount
            self.maxEntryFraction = maxEntryFraction
            self.policy = policy
            self.name = name
            self.clock = clock
            self.logger = logger
            self.metricsFactory = metricsFactory
        }
    }

    /// Bytes counted for each entry besides its key and value: the dictionary slot, the list node
    /// and the entry's metadata.
    public static let perEntryOverhead = 64

    /// The tier's name in statistics and reports.
    public let name: String
    /// Memory: the tier does not persist, so `allowedInMemoryOnly` entries may be stored in it.
    public var medium: TierMedium { .memory }
    /// The eviction policy the tier was created with.
    public let policy: EvictionPolicy

    private let capacity: Int
    /// The largest entry cost accepted: the entry-size rule, and what the policy can admit.
    private let maxEntryCost: Int
    private let clock: CacheClock
    private let counters: TierCounters
    private let logger: Logger?
    private let storage: Storage

    /// The designated initializer; `sketchHash` maps a key to W-TinyLFU's sketch hash (tests give
    /// the simulator's hash of the key's object id, to compare decisions).
    package init(
        _ configuration: Configuration, sketchHash: @escaping @Sendable (CacheKey) -> UInt64
    ) throws(TierCacheError) {
        guard configuration.capacity > 0 else {
            throw TierCacheError(
                .invalidConfiguration, "capacity must be positive; got \(configuration.capacity)")
        }
        if let count = configuration.maxEntryCount, count <= 0 {
            throw TierCacheError(.invalidConfiguration, "maxEntryCount must be positive; got \(count)")
        }
        let sizeLimit = try EntrySizeLimit(
            fraction: configuration.maxEntryFraction, capacity: configuration.capacity)
        self.name = configuration.name
        self.policy = configuration.policy
        self.capacity = configuration.capacity
        self.clock = configuration.clock
        self.counters = TierCounters(tierName: configuration.name, metricsFactory: configuration.metricsFactory)
        self.logger = configuration.logger
        self.storage = Storage(
            configuration.policy, capacity: configuration.capacity,
            maxEntryCount: configuration.maxEntryCount ?? .max, sketchHash: sketchHash)
        self.maxEntryCost = min(sizeLimit.maxBytes, storage.largestAdmissibleCost)
    }

    /// Creates a memory tier, or throws ``TierCacheError/Code/invalidConfiguration`` for a
    /// capacity or count that is not positive or a fraction outside `(0, 1]`.
    public convenience init(_ configuration: Configuration) throws(TierCacheError) {
        try self.init(configuration, sketchHash: WTinyLFUStore.defaultSketchHash)
    }

    /// Creates a memory tier holding at most `capacity` bytes, evicting by `policy`.
    public convenience init(
        capacity: Int, maxEntryCount: Int? = nil, policy: EvictionPolicy = .lru
    ) throws(TierCacheError) {
        try self.init(Configuration(capacity: capacity, maxEntryCount: maxEntryCount, policy: policy))
    }

    @inline(__always)
    private static func cost(of entry: CacheEntry, key: CacheKey) -> Int {
        entry.value.count + key.rawValue.utf8.count + perEntryOverhead
    }

    /// The entry stored under `key`, or nil; a hit counts as an access for the eviction policy,
    /// and an entry past its expiry hint is removed and missed.
    public func entry(forKey key: CacheKey) -> CacheEntry? {
        let timing = counters.startLookup()
        let found: CacheEntry?
        switch storage {
        case .lru(let locked): found = lookup(key, in: locked)
        case .s3fifo(let locked): found = lookup(key, in: locked)
        case .wTinyLFU(let locked): found = lookup(key, in: locked)
        }
        counters.recordLookup(hit: found != nil, timing: timing)
        return found
    }

    @inline(__always)
    private func lookup<Store: EvictingStore>(_ key: CacheKey, in store: LockedStore<Store>) -> CacheEntry? {
        store.state.withLock { store -> CacheEntry? in
            guard let entry = store.lookup(key) else { return nil }
            if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) {
                store.remove(key)
                counters.recordExpiration()
                return nil
            }
            return entry
        }
    }

    /// Stores `entry` under `key`, evicting as the policy decides to stay within the capacity.
    /// An entry over the per-entry limit or already past its expiry hint is refused, and the key's
    /// older entry is removed.
    public func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        let cost = Self.cost(of: entry, key: key)
        let outcome: StoreOutcome
        if cost > maxEntryCost {
            outcome = .refused(.tooLarge(size: cost, limit: maxEntryCost))
        } else if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) {
            outcome = .refused(.alreadyExpired)
        } else {
            outcome = .stored
        }
        let evicted: Int
        switch storage {
        case .lru(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .s3fifo(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .wTinyLFU(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        }
        counters.record(outcome)
        counters.recordEvictions(evicted)
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
        if case .refused(let reason) = outcome {
            logger?.debug(
                "memory tier refused an entry",
                metadata: ["tier": "\(name)", "key": "\(key.rawValue)", "reason": "\(reason)"])
        }
        return outcome
    }

    /// Stores a stored outcome's entry; any other outcome removes the key's older entry.
    @inline(__always)
    private func store<Store: EvictingStore>(
        _ entry: CacheEntry, cost: Int, key: CacheKey, outcome: StoreOutcome, in store: LockedStore<Store>
    ) -> Int {
        store.state.withLock { store -> Int in
            guard outcome == .stored else {
                store.remove(key)
                return 0
            }
            return store.store(entry, cost: cost, for: key)
        }
    }

    /// Removes the entry stored under `key`, if any.
    public func removeEntry(forKey key: CacheKey) {
        switch storage {
        case .lru(let store): store.state.withLock { $0.remove(key) }
        case .s3fifo(let store): store.state.withLock { $0.remove(key) }
        case .wTinyLFU(let store): store.state.withLock { $0.remove(key) }
        }
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
    }

    /// Removes every entry (the policy's history too).
    public func removeAll() {
        switch storage {
        case .lru(let store): store.state.withLock { $0.removeAll() }
        case .s3fifo(let store): store.state.withLock { $0.removeAll() }
        case .wTinyLFU(let store): store.state.withLock { $0.removeAll() }
        }
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
    }

    /// The bytes and entries held now, against the capacity.
    public func usage() -> TierUsage {
        let (bytes, entries) =
            switch storage {
            case .lru(let store): store.state.withLock { ($0.totalCost, $0.count) }
            case .s3fifo(let store): store.state.withLock { ($0.totalCost, $0.count) }
            case .wTinyLFU(let store): store.state.withLock { ($0.totalCost, $0.count) }
            }
        return TierUsage(bytes: bytes, entries: entries, capacity: capacity, maxEntryBytes: maxEntryCost)
    }

    /// The counters since the tier was created, with its usage.
    public func statistics() -> TierStatistics {
        counters.snapshot(usage: usage())
    }

    /// Resident keys, the ones the policy keeps longest first: under LRU, from most to least
    /// recently used; under the other policies, their queues from head to tail (the main queue
    /// first). O(n); for tests and diagnostics.
    public var keysByRecency: [CacheKey] {
        switch storage {
        case .lru(let store): store.state.withLock { $0.keysByRetention }
        case .s3fifo(let store): store.state.withLock { $0.keysByRetention }
        case .wTinyLFU(let store): store.state.withLock { $0.keysByRetention }
        }
    }
}

/// One policy's store behind its lock. A class so that ``MemoryTier/Storage`` can hold it in an
/// enum (a `Locked` cannot be copied); the tier switches on the enum once per call, and each case
/// runs code specialized for its store.
final class LockedStore<Store: EvictingStore>: Sendable {
    let state: Locked<Store>
    init(_ store: sending Store) { state = Locked(store) }
}

extension MemoryTier {
    enum Storage: Sendable {
        case lru(LockedStore<LRUStore>)
        case s3fifo(LockedStore<S3FIFOStore>)
        case wTinyLFU(LockedStore<WTinyLFUStore>)

        init(
            _ policy: EvictionPolicy, capacity: Int, maxEntryCount: Int,
            sketchHash: @escaping @Sendable (CacheKey) -> UInt64
        ) {
            switch policy {
            case .lru: self = .lru(LockedStore(LRUStore(capacity: capacity, maxEntryCount: maxEntryCount)))
            case .s3fifo: self = .s3fifo(LockedStore(S3FIFOStore(capacity: capacity, maxEntryCount: maxEntryCount)))
            case .wTinyLFU:
                self = .wTinyLFU(
                    LockedStore(WTinyLFUStore(capacity: capacity, maxEntryCount: maxEntryCount, sketchHash: sketchHash))
                )
            }
        }

        var largestAdmissibleCost: Int {
            switch self {
            case .lru(let store): store.state.withLock { $0.largestAdmissibleCost }
            case .s3fifo(let store): store.state.withLock { $0.largestAdmissibleCost }
            case .wTinyLFU(let store): store.state.withLock { $0.largestAdmissibleCost }
            }
        }
    }
}
