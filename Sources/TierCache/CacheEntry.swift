import Foundation

/// What a tier stores under a key: opaque bytes and a small metadata record.
///
/// Tiers know nothing of what the bytes mean (the HTTP layer stores an encoded response).
public struct CacheEntry: Hashable, Sendable {
    /// The stored bytes.
    public var value: [UInt8] {
        didSet { memo = Memo() }
    }
    /// When the entry was stored and when it stops being worth keeping.
    public var metadata: Metadata
    /// What a reader made of ``value``, shared by the copies of this entry (see ``Memo``). Not
    /// part of the entry's equality.
    public private(set) var memo = Memo()

    /// Creates an entry. `storedAt` is normally the cache clock's current time.
    public init(value: [UInt8], storedAt: Date, expiresAt: Date? = nil) {
        self.value = value
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
        lhs.value == rhs.value && lhs.metadata == rhs.metadata
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
