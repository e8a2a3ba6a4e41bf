/// Counters a tier keeps about its own traffic, plus its usage when the snapshot was taken.
///
/// Refusals by storage policy, and while a tier is suspended, are decided above the tier, by
/// ``TieredCache``, which adds them to the snapshot it reports for each tier.
public struct TierStatistics: Hashable, Sendable {
    /// Lookups that returned an entry.
    public var hits = 0
    /// Lookups that returned nothing (including expired and damaged entries).
    public var misses = 0
    /// Entries stored.
    public var stores = 0
    /// Entries removed to make room.
    public var evictions = 0
    /// Entries refused because their stored size exceeds the per-entry limit.
    public var refusedTooLarge = 0
    /// Entries refused because their storage policy excludes the tier.
    public var refusedByPolicy = 0
    /// Writes that skipped the tier because its ``TieredCache`` had suspended it
    /// (``RefusalReason/suspended``: the tier could not be kept coherent with a shared one then).
    public var refusedWhileSuspended = 0
    /// Entries refused because their expiry hint had already passed.
    public var refusedExpired = 0
    /// Stores refused because the storage had no room left (``RefusalReason/outOfSpace(detail:)``).
    public var refusedOutOfSpace = 0
    /// Stores the tier's eviction policy did not admit (``RefusalReason/notAdmitted(policy:)``).
    public var refusedNotAdmitted = 0
    /// Entries dropped because their expiry hint passed.
    public var expirations = 0
    /// Entries that failed to decode or verify, were treated as misses and deleted.
    public var corruptionsRemoved = 0
    /// Records compressed with a zstd dictionary the store no longer holds (one retired to make
    /// room for newer ones, or removed by hand): misses, deleted. Not counted in
    /// ``corruptionsRemoved``.
    public var dictionaryMisses = 0
    /// Sealed (encrypted) records that could not be opened under a key the tier holds (altered
    /// since they were sealed: authentication failed), or plain records in an encrypting tier.
    /// Misses, deleted. Not counted in ``corruptionsRemoved``. A record sealed under a key id the
    /// tier was not given (a dropped key, or another process's) is a miss left in place and not
    /// counted here.
    public var unopenableRecords = 0
    /// Records in a format version this code does not read (written by a newer or much older
    /// TierCache): misses, never misread. A shared tier (Redis) leaves them in place, so that a
    /// rolling deploy's servers do not delete what the newer servers write; a local tier deletes
    /// them. Not counted in ``corruptionsRemoved``.
    public var unknownFormatRecords = 0
    /// Records read under an older encryption key and sealed again under the current one (key
    /// rotation, done lazily on read).
    public var recordsResealed = 0
    /// Operations that failed, each counted once: by the tier when it answers in the failure's
    /// place (a miss instead of an error, a cleanup given up), by the ``TieredCache`` above it when
    /// the tier throws (the cache carries on past the error). A tier alone does not count the
    /// errors it throws: its caller has them.
    public var errors = 0
    /// Times the tier found its store damaged (or left half-checked by a process that died) and
    /// started it afresh, deleting what it held.
    public var storeResets = 0
    /// Usage when the snapshot was taken, if the tier could report it.
    public var usage: TierUsage?

    /// Statistics with every counter at zero.
    public init() {}

    /// Hits divided by lookups, or `nil` before the first lookup.
    public var hitRatio: Double? {
        let lookups = hits + misses
        return lookups == 0 ? nil : Double(hits) / Double(lookups)
    }
}
