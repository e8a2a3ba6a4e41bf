import CoreMetrics
import Logging
import TierCacheEviction

/// An in-memory tier: eviction by bytes under a chosen policy (least recently used by default,
/// any online policy of the simulator's, or a policy type of your own), with an optional
/// entry-count limit.
///
/// Lookups, stores and removals are O(1) and hold one lock briefly; the hit path takes the lock,
/// finds the entry in a dictionary, updates the policy's bookkeeping (for LRU, relinks it at the
/// front of the recency list) and returns the entry (its bytes are shared copy-on-write, not copied).
///
/// ## Eviction policy
/// ``EvictionPolicy`` names the built-in policies. Each is the one implementation in
/// `TierCacheEviction` that the simulator replays too: the tier gives it slots from its key table
/// and keeps values and costs beside them (tests replay traces through both and compare every hit),
/// so the hit ratio the simulator reports in byte mode, with each object's size set to its entry's
/// cost, is the one this tier reaches. `tiercache tune` recommends one, and CacheSimulation's
/// `PolicyKind.memoryTierConfiguration(capacityBytes:)` writes the line that configures it, e.g.
/// `MemoryTier(capacity: 256 << 20, policy: .s3fifo)`. A policy type of your own, conforming to
/// `TierCacheEviction.EvictionPolicy`, runs here unchanged through
/// ``init(capacity:maxEntryCount:policyType:)`` (dispatched through an existential, so a little
/// slower per request than a built-in one).
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
///
/// ## The entry-count limit
/// ``Configuration/maxEntryCount`` is kept by weight: for the policy each entry weighs at least
/// `capacity / maxEntryCount` bytes, so the tier never holds more entries than the limit nor more
/// bytes than the capacity.
public final class MemoryTier: LocalCacheTier {
    /// The memory tier's settings.
    public struct Configuration: Sendable {
        /// The most bytes the tier holds (entries' costs, see ``MemoryTier``). Must be positive.
        public var capacity: Int
        /// The most entries the tier holds, or `nil` for no limit beyond bytes.
        public var maxEntryCount: Int?

        /// What each entry weighs at least for the policy, so that no more than ``maxEntryCount``
        /// entries fit in ``capacity``: `capacity / maxEntryCount`, rounded up (0 without a limit).
        var minimumEntryWeight: Int {
            guard let count = maxEntryCount, count > 0, count < capacity else { return 0 }
            return (capacity + count - 1) / count
        }
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
    /// The built-in eviction policy the tier was created with; `nil` for a policy type of your own.
    public let policy: EvictionPolicy?
    /// The eviction policy's name, as reports print it (`"LRU"`, `"S3-FIFO"`, your type's name).
    public let policyName: String

    private let capacity: Int
    /// The largest entry cost accepted: the entry-size rule, and what the policy can admit.
    private let maxEntryCost: Int
    private let clock: CacheClock
    private let counters: TierCounters
    private let logger: Logger?
    private let storage: Storage

    /// The designated initializer: `makeStorage` makes the policy's store for the configuration's
    /// capacity and count limit.
    private init(
        _ configuration: Configuration, policy: EvictionPolicy?, policyName: String,
        storage makeStorage: (_ capacity: Int, _ minimumWeight: Int) -> Storage
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
        self.policy = policy
        self.policyName = policyName
        self.capacity = configuration.capacity
        self.clock = configuration.clock
        self.counters = TierCounters(tierName: configuration.name, metricsFactory: configuration.metricsFactory)
        self.logger = configuration.logger
        let minimumWeight = configuration.minimumEntryWeight
        let storage = makeStorage(configuration.capacity, minimumWeight)
        guard minimumWeight <= storage.largestAdmissibleCost else {
            throw TierCacheError(
                .invalidConfiguration,
                "maxEntryCount \(configuration.maxEntryCount ?? 0) is too small for \(policyName): each entry would weigh "
                    + "\(minimumWeight) bytes of the \(configuration.capacity), more than the "
                    + "\(storage.largestAdmissibleCost) the policy admits; allow more entries")
        }
        self.storage = storage
        self.maxEntryCost = min(sizeLimit.maxBytes, storage.largestAdmissibleCost)
    }

    /// Creates a memory tier, or throws ``TierCacheError/Code/invalidConfiguration`` for a
    /// capacity or count that is not positive or a fraction outside `(0, 1]`.
    public convenience init(_ configuration: Configuration) throws(TierCacheError) {
        try self.init(configuration, keyHash: Self.defaultKeyHash)
    }

    /// A tier whose policy counts keys by `keyHash` (W-TinyLFU's sketch); tests give the
    /// simulator's hash of the object id a key stands for, to compare decisions.
    package convenience init(
        _ configuration: Configuration, keyHash: @escaping @Sendable (CacheKey) -> UInt64
    ) throws(TierCacheError) {
        let policy = configuration.policy
        try self.init(configuration, policy: policy, policyName: Storage.policyName(policy)) { capacity, weight in
            Storage(policy, capacity: capacity, minimumWeight: weight, keyHash: keyHash)
        }
    }

    /// Creates a memory tier of `capacity` bytes that evicts by a policy type of your own (or a
    /// built-in one by its type), conforming to `TierCacheEviction.EvictionPolicy`: the policy the
    /// simulator replays, run here unchanged.
    ///
    /// - Throws: ``TierCacheError/Code/invalidConfiguration`` for a capacity or count that is not
    ///   positive, and for an offline policy (one that needs the future, like Belady's MIN).
    public convenience init<Policy: TierCacheEviction.EvictionPolicy>(
        capacity: Int, maxEntryCount: Int? = nil, policyType: Policy.Type
    ) throws(TierCacheError) {
        guard !Policy.needsFuture else {
            throw TierCacheError(
                .invalidConfiguration, "\(Policy.name) needs the future (an offline policy): a tier cannot run it")
        }
        let configuration = Configuration(capacity: capacity, maxEntryCount: maxEntryCount)
        try self.init(configuration, policy: nil, policyName: Policy.name) { capacity, weight in
            .custom(
                LockedStore(
                    PolicyStore<Policy>(capacity: capacity, minimumWeight: weight, keyHash: Self.defaultKeyHash))
            )
        }
    }

    /// How keys are hashed for policies that count them: Swift's own hash of the key, computed
    /// once per store.
    static let defaultKeyHash: @Sendable (CacheKey) -> UInt64 = { UInt64(bitPattern: Int64($0.hashValue)) }

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
        // One case per built-in policy, so that each runs code specialized for its store.
        switch storage {
        case .lru(let locked): found = lookup(key, in: locked)
        case .fifo(let locked): found = lookup(key, in: locked)
        case .clock(let locked): found = lookup(key, in: locked)
        case .sieve(let locked): found = lookup(key, in: locked)
        case .s3fifo(let locked): found = lookup(key, in: locked)
        case .arc(let locked): found = lookup(key, in: locked)
        case .twoQ(let locked): found = lookup(key, in: locked)
        case .lirs(let locked): found = lookup(key, in: locked)
        case .wTinyLFU(let locked): found = lookup(key, in: locked)
        case .custom(let locked): found = lookup(key, in: locked)
        }
        // Not `found != nil`: the compiler built that as Equatable's `==` on a tuple of two
        // optional entries, destroyed through the runtime's generic tuple destroy (callgrind:
        // 2 retains, 2 releases and 170 instructions a lookup).
        if case .some = found {
            counters.recordLookup(hit: true, timing: timing)
        } else {
            counters.recordLookup(hit: false, timing: timing)
        }
        return found
    }

    @inline(__always)
    private func lookup<Locked: LockedStoring>(_ key: CacheKey, in store: Locked) -> CacheEntry? {
        var evicted = 0
        let found = store.state.withLock { store -> CacheEntry? in
            guard let entry = store.lookup(key, evicted: &evicted) else { return nil }
            if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) {
                store.remove(key)
                counters.recordExpiration()
                return nil
            }
            return entry
        }
        counters.recordEvictions(evicted)
        return found
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
        case .fifo(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .clock(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .sieve(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .s3fifo(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .arc(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .twoQ(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .lirs(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .wTinyLFU(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
        case .custom(let locked): evicted = store(entry, cost: cost, key: key, outcome: outcome, in: locked)
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
    private func store<Locked: LockedStoring>(
        _ entry: CacheEntry, cost: Int, key: CacheKey, outcome: StoreOutcome, in store: Locked
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
        storage.locked.remove(key)
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
    }

    /// Removes every entry (the policy's history too).
    public func removeAll() {
        storage.locked.removeAll()
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
    }

    /// The bytes and entries held now, against the capacity.
    public func usage() -> TierUsage {
        let (bytes, entries) = storage.locked.usage
        return TierUsage(bytes: bytes, entries: entries, capacity: capacity, maxEntryBytes: maxEntryCost)
    }

    /// The counters since the tier was created, with its usage.
    public func statistics() -> TierStatistics {
        counters.snapshot(usage: usage())
    }

    /// Resident keys, the ones the policy keeps longest first: under LRU, from most to least
    /// recently used; under the other policies, as the policy's `residentsByRetention` orders
    /// them. O(n); for tests and diagnostics.
    public var keysByRecency: [CacheKey] {
        storage.locked.keysByRetention
    }
}

/// One policy's store behind its lock. A class so that ``MemoryTier/Storage`` can hold it in an
/// enum (a `Locked` cannot be copied); the tier switches on the enum once per lookup and store,
/// and each case runs code specialized for its store.
final class LockedStore<Store: EvictingStore>: LockedStoring {
    let state: Locked<Store>
    init(_ store: sending Store) { state = Locked(store) }
}

/// A store behind its lock, as the tier's cold paths (removal, usage, inspection) use it without
/// knowing the policy, and its hot paths through one generic function per policy.
protocol LockedStoring: AnyObject, Sendable {
    associatedtype Store: EvictingStore
    var state: Locked<Store> { get }
}

extension LockedStoring {
    func remove(_ key: CacheKey) { state.withLock { $0.remove(key) } }
    func removeAll() { state.withLock { $0.removeAll() } }
    var usage: (bytes: Int, entries: Int) { state.withLock { ($0.totalCost, $0.count) } }
    var keysByRetention: [CacheKey] { state.withLock { $0.keysByRetention } }
    var largestAdmissibleCost: Int { state.withLock { $0.largestAdmissibleCost } }
}

extension MemoryTier {
    /// The tier's store under its policy: a case per built-in policy, and one for a policy type
    /// of the app's own.
    enum Storage: Sendable {
        case lru(LockedStore<PolicyStore<LRUPolicy>>)
        case fifo(LockedStore<PolicyStore<FIFOPolicy>>)
        case clock(LockedStore<PolicyStore<CLOCKPolicy>>)
        case sieve(LockedStore<PolicyStore<SIEVEPolicy>>)
        case s3fifo(LockedStore<PolicyStore<S3FIFOPolicy>>)
        case arc(LockedStore<PolicyStore<ARCPolicy>>)
        case twoQ(LockedStore<PolicyStore<TwoQPolicy>>)
        case lirs(LockedStore<PolicyStore<LIRSPolicy>>)
        case wTinyLFU(LockedStore<PolicyStore<WTinyLFUPolicy>>)
        case custom(any LockedStoring)

        init(
            _ policy: EvictionPolicy, capacity: Int, minimumWeight: Int,
            keyHash: @escaping @Sendable (CacheKey) -> UInt64
        ) {
            func make<P: TierCacheEviction.EvictionPolicy>(_: P.Type) -> LockedStore<PolicyStore<P>> {
                LockedStore(PolicyStore<P>(capacity: capacity, minimumWeight: minimumWeight, keyHash: keyHash))
            }
            switch policy {
            case .lru: self = .lru(make(LRUPolicy.self))
            case .fifo: self = .fifo(make(FIFOPolicy.self))
            case .clock: self = .clock(make(CLOCKPolicy.self))
            case .sieve: self = .sieve(make(SIEVEPolicy.self))
            case .s3fifo: self = .s3fifo(make(S3FIFOPolicy.self))
            case .arc: self = .arc(make(ARCPolicy.self))
            case .twoQ: self = .twoQ(make(TwoQPolicy.self))
            case .lirs: self = .lirs(make(LIRSPolicy.self))
            case .wTinyLFU: self = .wTinyLFU(make(WTinyLFUPolicy.self))
            }
        }

        /// The report name of a built-in policy (its type's ``TierCacheEviction/EvictionPolicy/name``).
        static func policyName(_ policy: EvictionPolicy) -> String {
            switch policy {
            case .lru: LRUPolicy.name
            case .fifo: FIFOPolicy.name
            case .clock: CLOCKPolicy.name
            case .sieve: SIEVEPolicy.name
            case .s3fifo: S3FIFOPolicy.name
            case .arc: ARCPolicy.name
            case .twoQ: TwoQPolicy.name
            case .lirs: LIRSPolicy.name
            case .wTinyLFU: WTinyLFUPolicy.name
            }
        }

        /// The store, for the cold paths.
        var locked: any LockedStoring {
            switch self {
            case .lru(let store): store
            case .fifo(let store): store
            case .clock(let store): store
            case .sieve(let store): store
            case .s3fifo(let store): store
            case .arc(let store): store
            case .twoQ(let store): store
            case .lirs(let store): store
            case .wTinyLFU(let store): store
            case .custom(let store): store
            }
        }

        var largestAdmissibleCost: Int { locked.largestAdmissibleCost }
    }
}
