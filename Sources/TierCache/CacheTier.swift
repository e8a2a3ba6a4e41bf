/// A store that a ``TieredCache`` can use as one of its tiers: the plug-in point for your own
/// storage.
///
/// A tier maps ``CacheKey``s to ``CacheEntry``s within a byte capacity. It knows nothing of HTTP.
///
/// ## The contract
/// A conforming type **must**:
/// - be safe to call from many tasks and threads at once (the protocol is `Sendable`; guard
///   mutable state with a `Mutex` or an actor);
/// - never hold more than ``TierUsage/capacity`` bytes, evicting entries of its choosing to make
///   room (least-recently-used is the conventional choice), and count each eviction and each
///   refusal, by its reason, in its ``TierStatistics``;
/// - refuse, with ``StoreOutcome/refused(_:)`` and ``RefusalReason/tooLarge(size:limit:)``, any
///   entry whose stored size exceeds ``TierUsage/maxEntryBytes``, and remove whatever was stored
///   under the key before, so readers never see an older value after a refused store;
/// - never return an entry whose expiry hint (``CacheEntry/Metadata/expiresAt``) has passed, and
///   refuse one already expired when stored, with ``RefusalReason/alreadyExpired``, removing the
///   key's older entry as any refused store does;
/// - return exactly the bytes and metadata it was given, or nothing: a value that fails to decode
///   or verify is a miss (delete it and count it), never an error and never a crash;
/// - make ``removeEntry(forKey:)`` and ``removeAll()`` visible to every later read.
///
/// A tier **may** drop any entry at any time (it is a cache), keep its statistics approximately
/// (relaxed counters), and approximate LRU (batching access-time updates, sampling).
///
/// ## Errors
/// Methods throw ``TierCacheError`` when the storage itself fails (a lost connection, a damaged
/// file it cannot recover from). A miss is `nil`, not an error; a refusal is a ``StoreOutcome``,
/// not an error: a tier whose storage has no room (a full disk or quota) should refuse with
/// ``RefusalReason/outOfSpace(detail:)``, keep what it holds, and take stores again once space
/// returns. ``TieredCache`` counts a tier's errors and carries on with
/// the other tiers, so one failing tier degrades the cache rather than breaking it.
///
/// ## Synchronous and asynchronous tiers
/// Requirements are `async` so that a tier on the network (Redis) fits. Tiers that answer from
/// this machine conform to ``LocalCacheTier`` as well, whose synchronous requirements satisfy the
/// async ones: a caller that cannot suspend (a `URLProtocol` callback, a C callback) calls them
/// directly, and ``TieredCache/localEntry(forKey:tiers:)`` reads through the local tiers without
/// an async hop.
public protocol CacheTier: Sendable {
    /// A short name for statistics and logs ("memory", "lmdb", ...).
    var name: String { get }

    /// Where the tier keeps its entries; ``StoragePolicy`` decides by it.
    var medium: TierMedium { get }

    /// The entry stored under `key`, or `nil` on a miss. A hit counts as an access for eviction.
    func entry(forKey key: CacheKey) async throws -> CacheEntry?

    /// ``entry(forKey:)``, throwing whenever the storage could not be read, whatever the tier's
    /// own failure handling says: `nil` only when the tier read the key and found nothing. For
    /// records whose absence means something (`HTTPCache`'s tag records: a missing one purges).
    ///
    /// A tier that answers a failed read with a miss (`RedisTier`'s default failure mode)
    /// implements this; the default calls ``entry(forKey:)``, right for a tier whose failures
    /// always throw.
    func entryReportingFailures(forKey key: CacheKey) async throws -> CacheEntry?

    /// Stores `entry` under `key`, replacing any previous entry, evicting others if needed.
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome

    /// Removes the entry stored under `key`, if any.
    func removeEntry(forKey key: CacheKey) async throws

    /// Removes every entry.
    func removeAll() async throws

    /// Bytes and entries in use, and the limits the tier enforces.
    func usage() async throws -> TierUsage

    /// The tier's counters, with its usage attached where it can report it.
    func statistics() async -> TierStatistics
}

extension CacheTier {
    /// ``entry(forKey:)``: a tier whose failed reads throw reports them already.
    public func entryReportingFailures(forKey key: CacheKey) async throws -> CacheEntry? {
        try await entry(forKey: key)
    }
}

/// A ``CacheTier`` that answers from this machine, synchronously and without suspending.
///
/// The synchronous requirements also satisfy ``CacheTier``'s asynchronous ones, so a conforming
/// type implements each operation once.
public protocol LocalCacheTier: CacheTier {
    /// ``CacheTier/entry(forKey:)``, without suspending.
    func entry(forKey key: CacheKey) throws -> CacheEntry?
    /// ``CacheTier/store(_:forKey:)``, without suspending.
    func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome
    /// ``CacheTier/removeEntry(forKey:)``, without suspending.
    func removeEntry(forKey key: CacheKey) throws
    /// ``CacheTier/removeAll()``, without suspending.
    func removeAll() throws
    /// ``CacheTier/usage()``, without suspending.
    func usage() throws -> TierUsage
    /// ``CacheTier/statistics()``, without suspending.
    func statistics() -> TierStatistics
}
