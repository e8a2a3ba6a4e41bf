/// How full a tier is.
public struct TierUsage: Hashable, Sendable {
    /// Bytes the tier accounts to its entries (after compression, including per-entry overhead).
    public var bytes: Int
    /// Number of entries.
    public var entries: Int
    /// The byte capacity the tier enforces: ``bytes`` never exceeds it.
    public var capacity: Int
    /// The largest stored size of a single entry the tier accepts.
    public var maxEntryBytes: Int

    /// A usage report; `bytes` should not exceed `capacity`.
    public init(bytes: Int, entries: Int, capacity: Int, maxEntryBytes: Int) {
        self.bytes = bytes
        self.entries = entries
        self.capacity = capacity
        self.maxEntryBytes = maxEntryBytes
    }
}
