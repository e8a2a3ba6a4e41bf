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
    private struct State {
        var sequence: Int64 = 0
        var keys: [[UInt8]: Int64] = [:]
        /// Drained since the last commit: applied in a transaction that may not commit.
        var uncommitted: [[UInt8]] = []
    }
    private let pending = Locked(State())

    public init(limit: Int = 16_384) { self.limit = limit }

    public func noteAccess(_ key: [UInt8]) {
        pending.withLock { state in
            if state.keys.count >= limit, state.keys[key] == nil { return }
            state.sequence &+= 1
            state.keys[key] = state.sequence
        }
    }

    /// The noted keys in access order, oldest first; the log is left empty. The keys are held
    /// until the write transaction applying them ends: ``committed()`` lets them go,
    /// ``restoreUncommitted()`` puts them back.
    public func drain() -> [[UInt8]] {
        let keys = pending.withLock { state -> [[UInt8]: Int64] in
            // Nothing noted (every store after a store): no copy of the table, no sorted array.
            if state.keys.isEmpty { return [:] }
            defer { state.keys.removeAll(keepingCapacity: true) }
            return state.keys
        }
        if keys.isEmpty { return [] }
        let ordered = keys.sorted { $0.value < $1.value }.map(\.key)
        pending.withLock { $0.uncommitted += ordered }
        return ordered
    }

    /// The transaction that applied the drained keys committed.
    public func committed() {
        pending.withLock { state in
            if !state.uncommitted.isEmpty { state.uncommitted = [] }
        }
    }

    /// The transaction that applied the drained keys did not commit (a full store, a failed
    /// commit): they go back into the log, older than every access noted since, so that the
    /// next write applies them (a store that is full is when the order matters most).
    public func restoreUncommitted() {
        pending.withLock { state in
            guard !state.uncommitted.isEmpty else { return }
            let restored = state.uncommitted
            state.uncommitted = []
            // Newest first, each older than the last: past the limit, the newest are kept.
            var sequence = state.keys.values.min() ?? state.sequence + 1
            for key in restored.reversed() {
                sequence -= 1
                // A key read again since keeps its newer access.
                guard state.keys[key] == nil, state.keys.count < limit else { continue }
                state.keys[key] = sequence
            }
        }
    }

    public func forget(_ key: [UInt8]) {
        _ = pending.withLock { $0.keys.removeValue(forKey: key) }
    }

    public func removeAll() {
        pending.withLock { state in
            state.keys.removeAll()
            state.uncommitted = []
        }
    }
}
