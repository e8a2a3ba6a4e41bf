/// The names TierCache's libraries record under with swift-metrics, and their dimensions.
///
/// Tiers (``MemoryTier``, `LMDBTier`, `RedisTier`, and any tier built on ``TierCounters``) record
/// the `tier…` metrics with a `tier` dimension holding the tier's name; ``TieredCache`` records
/// the cache-wide lookups; `HTTPCache` the `http…` metrics. Counters count events since the
/// process started; gauges hold the latest value. Names follow Prometheus's conventions, so a
/// Prometheus backend exports them as they are.
///
/// Nothing is recorded unless the process bootstrapped a backend (`MetricsSystem.bootstrap`)
/// before creating the cache, or the cache was given a factory of its own.
///
/// Give each tier of a process its own name (`MemoryTier.Configuration.name`, `"memory"` by
/// default): tiers of one name record under one series, so two caches' memory tiers add their
/// counters together and overwrite each other's gauges.
public enum MetricLabels {
    // MARK: Per tier (dimension `tier`)

    /// Counter: lookups, with `result` = `hit` or `miss` (``TierStatistics/hits``, ``TierStatistics/misses``).
    public static let tierLookups = "tiercache_tier_lookups_total"
    /// Timer: how long one lookup in the tier took, hit or miss.
    public static let tierLookupDuration = "tiercache_tier_lookup_duration_seconds"
    /// Counter: stores, with `outcome` = `stored`, `too_large`, `expired`, `out_of_space`,
    /// `not_admitted`, `policy` or `suspended` (the refusals of ``RefusalReason``; `policy` and
    /// `suspended` are counted by ``TieredCache``).
    public static let tierStores = "tiercache_tier_stores_total"
    /// Counter: entries evicted to make room (``TierStatistics/evictions``).
    public static let tierEvictions = "tiercache_tier_evictions_total"
    /// Counter: entries dropped because their expiry hint passed (``TierStatistics/expirations``).
    public static let tierExpirations = "tiercache_tier_expirations_total"
    /// Counter: damaged entries removed (``TierStatistics/corruptionsRemoved``).
    public static let tierCorruptionsRemoved = "tiercache_tier_corruptions_removed_total"
    /// Counter: records unreadable for a reason other than damage, with `reason` =
    /// `missing_dictionary` (``TierStatistics/dictionaryMisses``), `unopenable` (a sealed
    /// record whose key is unknown or that was altered, ``TierStatistics/unopenableRecords``) or
    /// `unknown_format` (a format version this code does not read,
    /// ``TierStatistics/unknownFormatRecords``).
    public static let tierUnreadableRecords = "tiercache_tier_unreadable_records_total"
    /// Counter: records sealed again under the current encryption key (``TierStatistics/recordsResealed``).
    public static let tierRecordsResealed = "tiercache_tier_records_resealed_total"
    /// Counter: operations that failed (``TierStatistics/errors``), each once: by the tier when it
    /// answers in the failure's place, by the ``TieredCache`` when the tier throws.
    public static let tierErrors = "tiercache_tier_errors_total"
    /// Counter: times the tier found its store damaged and started afresh (``TierStatistics/storeResets``).
    public static let tierStoreResets = "tiercache_tier_store_resets_total"
    /// Gauge: bytes the tier holds, as ``TierUsage/bytes`` counts them (local tiers, after each change).
    public static let tierBytes = "tiercache_tier_bytes"
    /// Gauge: entries the tier holds (local tiers, after each change).
    public static let tierEntries = "tiercache_tier_entries"

    // MARK: Per tiered cache

    /// Counter: ``TieredCache`` lookups through all its tiers, with `result` = `hit` or `miss`.
    public static let lookups = "tiercache_lookups_total"
    /// Timer: how long a ``TieredCache`` lookup took, promotion included.
    public static let lookupDuration = "tiercache_lookup_duration_seconds"

    // MARK: HTTP engine

    /// Counter: requests `HTTPCache` answered, with `result` = `hit` (from the cache, without the
    /// origin), `miss` (fetched), `not_modified` or `modified` (revalidated, by the origin's answer).
    public static let httpRequests = "tiercache_http_requests_total"
    /// Counter: stale responses served (`stale-while-revalidate`, `max-stale`, offline fallback).
    public static let httpStaleServed = "tiercache_http_stale_served_total"
    /// Counter: requests answered by a fetch already in flight for the same request (not those
    /// that joined one and then fetched for themselves: a shared cache's rule).
    public static let httpCoalesced = "tiercache_http_coalesced_requests_total"
    /// Counter: responses offered for storing, with `outcome` = `stored`, `not_storable`
    /// (RFC 9111 §3; the reason in dimension `reason`), `policy` (a hook or the storage-policy
    /// table), `too_large` (every allowed tier refused it) or `tag_list_refused` (more tags, or
    /// a longer one, than `HTTPCache.Tagging` allows).
    public static let httpStores = "tiercache_http_stores_total"
    /// Counter: stored responses invalidated by unsafe requests (RFC 9111 §4.4).
    public static let httpInvalidations = "tiercache_http_invalidations_total"
    /// Counter: stored responses that failed to decode and were removed.
    public static let httpCorruptEntriesRemoved = "tiercache_http_corrupt_entries_removed_total"
    /// Counter: requests whose cache key was invalid (empty, or too long), which passed through
    /// uncached.
    public static let httpInvalidKeys = "tiercache_http_invalid_keys_total"
    /// Counter: purges carried out, with `target` = `url` or `tag` and `mode` = `hard` or `soft`.
    public static let httpPurges = "tiercache_http_purges_total"
    /// Counter: stored responses found purged by a tag when read, and removed.
    public static let httpPurgedEntriesRemoved = "tiercache_http_purged_entries_removed_total"

    // MARK: Coherence (TierCacheRedis's `RedisCoherence`)

    /// Counter: keys removed from the upper tiers because Redis said they changed.
    public static let coherenceInvalidatedKeys = "tiercache_coherence_invalidated_keys_total"
    /// Counter: times the upper tiers were emptied, with `cause` = `tracking_began`,
    /// `tracking_lost`, `server_flushed`, `foreign_key`, `unreadable_push`, `invalidation_failed` or
    /// `data_connection_closed`.
    public static let coherenceFlushes = "tiercache_coherence_flushes_total"
    /// Counter: tracking connections lost, or subscriptions that failed.
    public static let coherenceTrackingLosses = "tiercache_coherence_tracking_losses_total"
    /// Counter: pushes that could not be read as invalidations (malformed, or of an unknown kind).
    public static let coherenceMalformedPushes = "tiercache_coherence_malformed_pushes_total"
}
