/// What a tier did with an entry it was asked to store.
///
/// A refusal is not an error: the tier is healthy and the caller's data simply does not belong
/// there. Every refusal is counted in the tier's ``TierStatistics``, but a suspension's
/// (``RefusalReason/suspended``: see ``TieredCache/suspendedTiers``).
public enum StoreOutcome: Hashable, Sendable {
    /// The entry is stored (replacing any previous entry under the key).
    case stored
    /// The entry was not stored, for the given reason. Any previous entry under the key is removed,
    /// so a reader never sees a value older than the one the caller just tried to store.
    case refused(RefusalReason)

    /// Whether the entry was stored.
    public var isStored: Bool {
        // A pattern, not `== .stored`: the synthesized `==` copies both outcomes (a refusal may
        // carry a string), an outlined copy on every store.
        if case .stored = self { true } else { false }
    }
}

/// Why an entry was not stored.
public enum RefusalReason: Hashable, Sendable, CustomStringConvertible {
    /// The entry's stored size (after compression and framing) exceeds the tier's per-entry limit,
    /// `maxEntryFraction` of its capacity (URLCache's 5% rule).
    case tooLarge(size: Int, limit: Int)
    /// The entry's storage policy does not allow this tier (decided by ``TieredCache``).
    case policy(StoragePolicy)
    /// The entry's expiry hint has already passed.
    case alreadyExpired
    /// The tier's storage has no room left that eviction could make: the file system is full
    /// (`ENOSPC`), over quota (`EDQUOT`) or over the process's file-size limit (`EFBIG`), or the
    /// store's map stayed full after evicting; or a ``MemoryTier`` numbers as many keys as its
    /// policy's slot ids allow (`PolicyContext.maximumSlotCount`, over 2 billion). Entries already
    /// stored stay readable, and the tier stores again by itself once space returns. `detail`
    /// says which.
    case outOfSpace(detail: String)
    /// The tier's eviction policy did not admit the entry: an admission rule, not a lack of room
    /// (`MemoryTier` under LIRS keeps out, on its first store, an entry larger than the room its
    /// LIR set leaves; a policy of your own may have rules of its own). The key's older entry is
    /// removed.
    case notAdmitted(policy: String)
    /// The tier is suspended: its ``TieredCache`` skips it for now, because what keeps it coherent
    /// with a shared tier below cannot (``TieredCache/suspendTiers(above:)``).
    case suspended

    /// The reason in words, with its figures.
    public var description: String {
        switch self {
        case .tooLarge(let size, let limit): "too large: \(size) bytes stored, limit \(limit)"
        case .policy(let policy): "storage policy \(policy) excludes this tier"
        case .alreadyExpired: "already expired"
        case .outOfSpace(let detail): "out of space: \(detail)"
        case .notAdmitted(let policy): "not admitted by the \(policy) policy"
        case .suspended: "suspended: the tier cannot be kept coherent now"
        }
    }
}
