import Foundation

/// What a tier stores under a key: opaque bytes and a small metadata record.
///
/// Tiers know nothing of what the bytes mean (the HTTP layer stores an encoded response).
public struct CacheEntry: Hashable, Sendable {
    /// The stored bytes.
    ///
    /// They are kept in the entry's ``memo``, so that an entry is one reference and its
    /// metadata: a copy (every memory-tier hit makes one) retains and releases one object, not
    /// two. Setting them gives the entry a new, empty memo; changing them in place
    /// (`entry.value.append(…)`) does not copy them when the entry held the only reference.
    public var value: [UInt8] {
        get { memo.bytes }
        set { memo = Memo(bytes: newValue) }
        _modify {
            var bytes = memo.bytes
            // The placeholder drops this entry's reference to its memo, so that the bytes are
            // uniquely referenced by `bytes` when the memo was this entry's alone.
            memo = Memo.placeholder
            defer { memo = Memo(bytes: bytes) }
            yield &bytes
        }
    }
    /// When the entry was stored and when it stops being worth keeping.
    public var metadata: Metadata
    /// What a reader made of ``value``, shared by the copies of this entry (see ``Memo``). Not
    /// part of the entry's equality.
    public private(set) var memo: Memo

    /// Creates an entry. `storedAt` is normally the cache clock's current time.
    public init(value: [UInt8], storedAt: Date, expiresAt: Date? = nil) {
        self.memo = Memo(bytes: value)
        self.metadata = Metadata(storedAt: storedAt, expiresAt: expiresAt)
    }

    /// Creates an entry from `Data`.
    public init(value: Data, storedAt: Date, expiresAt: Date? = nil) {
        self.init(value: [UInt8](value), storedAt: storedAt, expiresAt: expiresAt)
    }

    /// The size of ``value`` in bytes, before any compression a tier applies.
    public var size: Int { value.count }

    /// Entries are equal when their values and metadata are; the memo does not count.
    public static func == (lhs: CacheEntry, rhs: CacheEntry) -> Bool {
        lhs.metadata == rhs.metadata && (lhs.memo === rhs.memo || lhs.value == rhs.value)
    }

    /// Hashes the value and the metadata (not the memo), as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(value)
        hasher.combine(metadata)
    }

    /// The metadata record kept beside every value.
    public struct Metadata: Hashable, Sendable {
        /// When the entry was stored.
        public var storedAt: Date
        /// The expiry hint: the instant after which the entry is worthless, even as a stale
        /// fallback. A tier must not return an entry past this instant and may drop it any time
        /// after. `nil` means the entry is kept until evicted.
        public var expiresAt: Date?

        /// A metadata record for an entry stored at `storedAt`, with an optional expiry hint.
        public init(storedAt: Date, expiresAt: Date? = nil) {
            self.storedAt = storedAt
            self.expiresAt = expiresAt
        }

        /// Whether the expiry hint has passed at `now`.
        @inline(__always)
        public func isExpired(at now: Date) -> Bool {
            guard let expiresAt else { return false }
            return expiresAt <= now
        }
    }
}
