import CoreMetrics
import Logging
import TierCacheEviction

/// An in-memory tier: eviction by bytes under a chosen policy (least recently used by default,
/// any online policy of the simulator's, or a policy type of your own), with an optional
/// entry-count limit.
///
/// Lookups, stores and removals hold one lock briefly and do O(1) work (amortized for CLOCK,
/// SIEVE, S3-FIFO and LIRS, whose eviction may walk many entries at once); the hit path takes the lock,
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
/// it (or the entry-count limit) first evicts entries as the policy chooses.
///
/// ## The entry-size rule
/// Like the disk tier, the memory tier refuses an entry whose cost exceeds
/// ``Configuration/maxEntryFraction`` of its capacity, by default the same 5%. One large entry
/// admitted to a small memory tier would evict most of the hot set for a value that is rarely hot
/// itself; refusing it keeps the tier's hit ratio, and the disk tier below still holds the entry
/// when it fits there. Raise the fraction for tiers that cache a few large objects. Under S3-FIFO
/// the limit is also below 10% of the capacity, whatever the fraction (see ``EvictionPolicy/s3fifo``),
/// and under 2Q at most 25% (``EvictionPolicy/twoQ``); an entry-count limit whose entries' weight
/// passes that (10 entries or fewer under S3-FIFO, 3 or fewer under 2Q) is refused at
/// initialization with ``TierCacheError/Code/invalidConfiguration``.
///
/// ## The entry-count limit
/// ``Configuration/maxEntryCount`` (`n`, of a capacity `c`) is kept by weight: for the policy each
/// entry weighs at least `w = c / n` bytes (rounded down), and the policy is given
/// `min(c, (n + 1) × w − 1)` bytes, so `n` entries fit and `n + 1` never do: the tier holds up to
/// exactly the limit, and never more bytes than the capacity. The bytes given up are fewer than
/// `c / w`, under 2% since `w` is at least an entry's smallest cost (`perEntryOverhead` + 1): below
/// that, no `n` entries fit in `c`, the limit cannot bind, and no weight is needed.
public final class MemoryTier: LocalCacheTier {
    /// The memory tier's settings.
    public struct Configuration: Sendable {
        /// The most bytes the tier holds (entries' costs, see ``MemoryTier``). Must be positive;
        /// a capacity above 2^60 bytes (`PolicyContext.maximumCapacity`), such as `Int.max` for a
        /// tier bounded by ``maxEntryCount`` alone, counts as 2^60.
        public var capacity: Int
        /// The most entries the tier holds, or `nil` for no limit beyond bytes.
        public var maxEntryCount: Int?

        /// What each entry weighs at least for the policy (``MemoryTier``'s "The entry-count
        /// limit"): `capacity / maxEntryCount`, rounded down; 0 without a limit, or with one that
        /// cannot bind (fewer bytes an entry than any entry costs).
        var minimumEntryWeight: Int {
            let capacity = effectiveCapacity
            guard let count = maxEntryCount, count > 0, capacity / count > MemoryTier.perEntryOverhead else { return 0 }
            return capacity / count
        }
        /// The capacity the policy is given (``MemoryTier``'s "The entry-count limit"): no room
        /// for one entry more than the limit at ``minimumEntryWeight``. (Weights rounded up
        /// instead kept a tier of 2^60 bytes and 1,000 entries to 999.)
        var policyCapacity: Int {
            let capacity = effectiveCapacity
            let weight = minimumEntryWeight
            guard weight > 0, let count = maxEntryCount else { return capacity }
            // count × weight is at most the capacity; one weight more may pass `Int.max` where an
            // Int has 32 bits (watchOS on arm64_32, where the capacity is clamped to 2^31 - 1).
            let (bound, overflows) = (count * weight).addingReportingOverflow(weight - 1)
            return overflows ? capacity : min(capacity, bound)
        }
        /// ``capacity``, at most what a policy is given (`PolicyContext.maximumCapacity`): the
        /// capacity the tier keeps, and the one the count limit's weights divide.
        var effectiveCapacity: Int { min(capacity, Int(clamping: PolicyContext.maximumCapacity)) }
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
        let capacity = configuration.effectiveCapacity
        let sizeLimit = try EntrySizeLimit(fraction: configuration.maxEntryFraction, capacity: capacity)
        self.name = configuration.name
        self.policy = policy
        self.policyName = policyName
        self.capacity = capacity
        self.clock = configuration.clock
        self.counters = TierCounters(tierName: configuration.name, metricsFactory: configuration.metricsFactory)
        self.logger = configuration.logger
        let minimumWeight = configuration.minimumEntryWeight
        let storage = makeStorage(configuration.policyCapacity, minimumWeight)
        guard minimumWeight <= storage.largestAdmissibleCost else {
            throw TierCacheError(
                .invalidConfiguration,
                "maxEntryCount \(configuration.maxEntryCount ?? 0) is too small for \(policyName): each entry would weigh "
                    + "\(minimumWeight) bytes of the \(capacity), more than the "
                    + "\(storage.largestAdmissibleCost) the policy admits; allow more entries")
        }
        self.maxEntryCost = min(sizeLimit.maxBytes, storage.largestAdmissibleCost)
        // The smallest entry costs the overhead and a one-byte key: a tier whose largest entry is
        // less stores nothing, every store refused as too large.
        guard maxEntryCost > Self.perEntryOverhead else {
            throw TierCacheError(
                .invalidConfiguration,
                "capacity \(capacity) admits no entry: its largest entry may cost \(maxEntryCost) bytes (maxEntryFraction "
                    + "\(configuration.maxEntryFraction), \(policyName) admitting \(storage.largestAdmissibleCost)), and the "
                    + "smallest costs \(Self.perEntryOverhead + 1) (perEntryOverhead and a one-byte key); "
                    + "raise the capacity or maxEntryFraction")
        }
        self.storage = storage
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
        try self.init(Configuration(capacity: capacity, maxEntryCount: maxEntryCount), policyType: policyType)
    }

    /// Creates a memory tier with `configuration`'s settings (capacity, count limit, entry-size
    /// fraction, name, clock, logger, metrics) that evicts by a policy type of your own;
    /// `configuration.policy`, a built-in's name, is not read.
    ///
    /// - Throws: ``TierCacheError/Code/invalidConfiguration`` for settings out of range, and for
    ///   an offline policy (one that needs the future, like Belady's MIN).
    public convenience init<Policy: TierCacheEviction.EvictionPolicy>(
        _ configuration: Configuration, policyType: Policy.Type
    ) throws(TierCacheError) {
        try self.init(configuration, policyType: policyType, maximumSlots: PolicyContext.maximumSlotCount)
    }

    /// A tier of `policyType` that numbers at most `maximumSlots` keys at once (the public
    /// initializer's `PolicyContext.maximumSlotCount`; a small limit in tests, where the real one
    /// takes tens of GiB of entries).
    convenience init<Policy: TierCacheEviction.EvictionPolicy>(
        _ configuration: Configuration, policyType: Policy.Type, maximumSlots: Int
    ) throws(TierCacheError) {
        guard !Policy.needsFuture else {
            throw TierCacheError(
                .invalidConfiguration, "\(Policy.name) needs the future (an offline policy): a tier cannot run it")
        }
        try self.init(configuration, policy: nil, policyName: Policy.name) { capacity, weight in
            .custom(
                CustomStore(
                    PolicyStore<Policy>(
                        capacity: capacity, minimumWeight: weight, maximumSlots: maximumSlots,
                        keyHash: Self.defaultKeyHash)))
        }
    }

    /// How keys are hashed for policies that count them: the seeded hash the key computed when it
    /// was made (hashing that number again, as `hashValue` does, ran a second `Hasher` per store).
    static let defaultKeyHash: @Sendable (CacheKey) -> UInt64 = { UInt64(bitPattern: Int64($0.textHash)) }

    /// The refusal of a new key while every slot id is in use (`PolicyContext.maximumSlotCount`).
    static let slotsExhausted = RefusalReason.outOfSpace(
        detail:
            "the tier numbers at most \(PolicyContext.maximumSlotCount) keys at once (resident or remembered by its policy)"
    )

    /// Creates a memory tier holding at most `capacity` bytes, evicting by `policy`.
    public convenience init(
        capacity: Int, maxEntryCount: Int? = nil, policy: EvictionPolicy = .lru
    ) throws(TierCacheError) {
        try self.init(Configuration(capacity: capacity, maxEntryCount: maxEntryCount, policy: policy))
    }

    /// What the tier charges `entry` stored under `key` against its capacity: the value's bytes,
    /// the key's UTF-8 bytes and ``perEntryOverhead``. For what stands beside the tier and must
    /// count entries as it does (a baseline, an estimate of the tier's hit ratio at a capacity).
    @inlinable @inline(__always)
    public static func cost(of entry: CacheEntry, forKey key: CacheKey) -> Int {
        entry.value.count + key.rawValue.utf8.count + perEntryOverhead
    }

    /// The entry stored under `key`, or nil; a hit counts as an access for the eviction policy,
    /// and an entry past its expiry hint is removed and missed.
    public func entry(forKey key: CacheKey) -> CacheEntry? {
        let timing = counters.startLookup()
        // One case per built-in policy, so that each runs code specialized for its store; the
        // store is borrowed (an operation value, as the cold paths use, would copy the key and
        // the entry into it: a retain and a release each).
        let found: CacheEntry?
        switch storage {
        case .lru(let store): found = lookup(key, in: store)
        case .fifo(let store): found = lookup(key, in: store)
        case .clock(let store): found = lookup(key, in: store)
        case .sieve(let store): found = lookup(key, in: store)
        case .s3fifo(let store): found = lookup(key, in: store)
        case .arc(let store): found = lookup(key, in: store)
        case .twoQ(let store): found = lookup(key, in: store)
        case .lirs(let store): found = lookup(key, in: store)
        case .wTinyLFU(let store): found = lookup(key, in: store)
        case .custom(let store): found = store.apply(Lookup(tier: self, key: key))
        }
        // Not `found != nil`: the compiler built that as Equatable's `==` on a tuple of two
        // optional entries, destroyed through the runtime's generic tuple destroy (callgrind:
        // 2 retains, 2 releases and 170 instructions a lookup).
        if counters.isRecordingMetrics {
            if case .some = found {
                counters.recordLookupMetric(hit: true, timing: timing)
            } else {
                counters.recordLookupMetric(hit: false, timing: timing)
            }
        }
        return found
    }

    @inline(__always)
    private func lookup<Store: EvictingStore>(_ key: CacheKey, in store: borrowing Locked<Store>) -> CacheEntry? {
        var evicted = 0
        var expired = false
        // Hits and misses are counted under the lock the lookup holds anyway, not by an atomic.
        let found = store.withLock { store -> CacheEntry? in
            guard let entry = store.lookup(key, evicted: &evicted) else {
                store.requests.misses &+= 1
                return nil
            }
            if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) {
                store.remove(key)
                store.requests.misses &+= 1
                expired = true
                return nil
            }
            store.requests.hits &+= 1
            return entry
        }
        counters.recordEvictions(evicted)
        // After the lock, as evictions are: the metrics backend is the app's, and may be slow.
        if expired {
            counters.recordExpiration()
            if counters.isRecordingMetrics { counters.recordUsage(usage()) }
        }
        return found
    }

    /// ``lookup(_:in:)`` for a policy type of the app's own.
    private struct Lookup: StoreOperation {
        let tier: MemoryTier
        let key: CacheKey
        func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> CacheEntry? { tier.lookup(key, in: store) }
    }

    /// Stores `entry` under `key`, evicting as the policy decides to stay within the capacity.
    /// An entry over the per-entry limit or already past its expiry hint is refused, and the key's
    /// older entry is removed.
    public func store(_ entry: CacheEntry, forKey key: CacheKey) -> StoreOutcome {
        let cost = Self.cost(of: entry, forKey: key)
        // The refusal apart, so that the usual store carries no outcome through the locked
        // section: a refusal's reason may carry a string, and passing the outcome in and out
        // copied it on every store.
        if let reason = refusal(of: entry, cost: cost) {
            storage.remove(key)
            return refused(key, for: reason)
        }
        let result: StoreResult
        switch storage {
        case .lru(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .fifo(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .clock(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .sieve(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .s3fifo(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .arc(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .twoQ(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .lirs(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .wTinyLFU(let locked): result = store(entry, cost: cost, key: key, in: locked)
        case .custom(let store): result = store.apply(Storing(tier: self, entry: entry, cost: cost, key: key))
        }
        counters.recordEvictions(result.evicted)
        // LIRS keeps out, on its first store, an entry larger than the room its LIR set leaves;
        // a policy of the app's own may keep out others.
        guard result.admitted else {
            return refused(key, for: result.slotsExhausted ? Self.slotsExhausted : .notAdmitted(policy: policyName))
        }
        counters.recordStoredMetric()
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
        return .stored
    }

    /// Why the tier refuses `entry` at `cost`, or nil when it stores it: over the per-entry
    /// limit, or already past its expiry hint.
    @inline(__always)
    private func refusal(of entry: CacheEntry, cost: Int) -> RefusalReason? {
        if cost > maxEntryCost { return .tooLarge(size: cost, limit: maxEntryCost) }
        if entry.metadata.expiresAt != nil, entry.metadata.isExpired(at: clock.now()) { return .alreadyExpired }
        return nil
    }

    /// Counts and logs a refused store (the key's older entry removed already).
    private func refused(_ key: CacheKey, for reason: RefusalReason) -> StoreOutcome {
        let outcome = StoreOutcome.refused(reason)
        counters.record(outcome)
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
        logger?.debug(
            "memory tier refused an entry",
            metadata: ["tier": "\(name)", "key": "\(key.rawValue)", "reason": "\(reason)"])
        return outcome
    }

    /// Stores an admitted entry.
    @inline(__always)
    private func store<Store: EvictingStore>(
        _ entry: CacheEntry, cost: Int, key: CacheKey, in store: borrowing Locked<Store>
    ) -> StoreResult {
        store.withLock { store -> StoreResult in
            let result = store.store(entry, cost: cost, for: key)
            // Counted under the lock, as lookups are; refusals are counted by the tier's counters.
            if result.admitted { store.requests.stores &+= 1 }
            return result
        }
    }

    /// ``store(_:cost:key:in:)`` for a policy type of the app's own.
    private struct Storing: StoreOperation {
        let tier: MemoryTier
        let entry: CacheEntry
        let cost: Int
        let key: CacheKey
        func run<Store: EvictingStore>(on store: borrowing Locked<Store>) -> StoreResult {
            tier.store(entry, cost: cost, key: key, in: store)
        }
    }

    /// Removes the entry stored under `key`, if any.
    public func removeEntry(forKey key: CacheKey) {
        storage.remove(key)
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
    }

    /// Removes every entry (the policy's history too).
    public func removeAll() {
        storage.removeAll()
        if counters.isRecordingMetrics { counters.recordUsage(usage()) }
    }

    /// The bytes and entries held now, against the capacity.
    public func usage() -> TierUsage {
        let (bytes, entries) = storage.usage
        return TierUsage(bytes: bytes, entries: entries, capacity: capacity, maxEntryBytes: maxEntryCost)
    }

    /// The counters since the tier was created, with its usage.
    public func statistics() -> TierStatistics {
        var statistics = counters.snapshot(usage: usage())
        let requests = storage.requests
        statistics.hits &+= requests.hits
        statistics.misses &+= requests.misses
        statistics.stores &+= requests.stores
        return statistics
    }

    /// Resident keys, the ones the policy keeps longest first: under LRU, from most to least
    /// recently used; under the other policies, as the policy's `residentsByRetention` orders
    /// them. O(n); for tests and diagnostics.
    public var keysByRecency: [CacheKey] {
        storage.keysByRetention
    }
}
