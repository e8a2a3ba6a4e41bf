/// Counts of what ``HTTPCache`` did.
public struct HTTPCacheStatistics: Hashable, Sendable {
    /// Requests answered from the cache without contacting the origin (fresh, or allowed stale).
    public var hits = 0
    /// Requests that found nothing usable and went to the network.
    public var misses = 0
    /// Revalidations the origin answered with 304 Not Modified.
    public var revalidatedNotModified = 0
    /// Revalidations the origin answered with a new response.
    public var revalidatedModified = 0
    /// Stale responses served: `stale-while-revalidate`, `max-stale`, or after a network failure.
    public var staleServes = 0
    /// Responses stored in at least one tier.
    public var stores = 0
    /// Responses not stored, by RFC 9111 §3 reason.
    public var notStorable: [Storability.Reason: Int] = [:]
    /// Responses a hook or the storage-policy table kept out of every tier.
    public var refusedByPolicy = 0
    /// Responses every allowed tier refused as too large.
    public var refusedTooLarge = 0
    /// Stored entries invalidated by unsafe requests (RFC 9111 §4.4).
    public var invalidations = 0
    /// Stored entries that failed to decode (another format version, damage): removed.
    public var corruptEntriesRemoved = 0
    /// Requests answered by a fetch already in flight for the same request (not those that
    /// joined one and then fetched for themselves: in a shared cache, a response it could not
    /// serve them from storage).
    public var coalescedRequests = 0
    /// Requests whose cache key (``HTTPCache/Configuration/key``) was empty or longer than
    /// ``HTTPCache/maximumPrimaryKeyLength``: they passed through uncached.
    public var invalidKeys = 0
    /// Purges carried out: each URL, each tag (``HTTPCache/purge(url:mode:)``,
    /// ``HTTPCache/purge(tags:mode:)``).
    public var purges = 0
    /// Stored responses found purged by a tag when read, and removed.
    public var purgedEntriesRemoved = 0
    /// Responses not stored because their tag list broke a bound of ``HTTPCache/Tagging``.
    public var tagListsRefused = 0

    /// Statistics with every counter at zero.
    public init() {}
}
