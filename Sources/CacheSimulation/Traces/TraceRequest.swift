/// One request of a trace: which object, how large it is, and when it was made.
public struct TraceRequest: Sendable, Hashable {
    /// The object's key. Integer keys are kept as they are; string keys of the plain format are hashed.
    public var key: UInt64
    /// The object's size in bytes; 1 where the format has no sizes.
    public var size: UInt32
    /// The request's timestamp in the trace's own unit, 0 where the format has none.
    public var timestamp: UInt64

    /// A request for `key`; size 1 and timestamp 0 where the format has none.
    public init(key: UInt64, size: UInt32 = 1, timestamp: UInt64 = 0) {
        self.key = key
        self.size = size
        self.timestamp = timestamp
    }
}
