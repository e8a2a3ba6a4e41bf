@_spi(TierCacheInternals) import TierCache

/// Accesses seen by lookups, waiting to be written into a disk tier's recency index.
///
/// A lookup runs in a read-only transaction and cannot move its entry in the on-disk LRU order,
/// so it notes the access here; the next write transaction (which is the only place eviction
/// happens) applies all noted accesses, in order, before it evicts. The order is therefore exact
/// as long as fewer than ``limit`` distinct keys are read between two writes; beyond that, further
/// keys are not noted until the next write (an approximation of LRU, never a failure).
public final class AccessLog: Sendable {
    public let limit: Int
    private let pending = Locked<(sequence: Int64, keys: [[UInt8]: Int64])>((0, [:]))

    public init(limit: Int = 16_384) { self.limit = limit }

    public func noteAccess(_ key: [UInt8]) {
        pending.withLock { state in
            if state.keys.count >= limit, state.keys[key] == nil { return }
            state.sequence &+= 1
            state.keys[key] = state.sequence
        }
    }

    /// The noted keys in access order, oldest first; the log is left empty. A write whose
    /// transaction then does not commit gives them back with ``restore(_:)``.
    public func drain() -> [[UInt8]] {
        let keys = pending.withLock { state -> [[UInt8]: Int64] in
            // Nothing noted (every store after a store): no copy of the table, no sorted array.
            if state.keys.isEmpty { return [:] }
            defer { state.keys.removeAll(keepingCapacity: true) }
            return state.keys
        }
        if keys.isEmpty { return [] }
        return keys.sorted { $0.value < $1.value }.map(\.key)
    }

    /// Puts back `keys`, drained (oldest first) by a write whose transaction did not commit (a
    /// full store, a failed commit), older than every access noted since, for the next write to
    /// apply: a store that is full is when the order matters most. A key read again since keeps
    /// its newer access; past ``limit``, the newest of `keys` are kept.
    public func restore(_ keys: [[UInt8]]) {
        guard !keys.isEmpty else { return }
        pending.withLock { state in
            var sequence = state.keys.values.min() ?? state.sequence + 1
            for key in keys.reversed() {
                sequence -= 1
                guard state.keys[key] == nil, state.keys.count < limit else { continue }
                state.keys[key] = sequence
            }
        }
    }

    public func forget(_ key: [UInt8]) {
        _ = pending.withLock { $0.keys.removeValue(forKey: key) }
    }

    public func removeAll() {
        pending.withLock { $0.keys.removeAll() }
    }
}
