@_spi(TierCacheInternals) import TierCache

/// The writes and removals ``TieredURLCache`` sends its network tiers, in the background (as
/// `URLCache`'s API cannot wait for them), each key's in the order they were made: a write waits
/// for the key's previous one, and a removal of everything for all before it (and writes after it
/// for it). Writes of different keys go at once. (Detached tasks, one per write, reached the
/// tier in any order: a removal before the store it followed, an older value after a newer one.)
final class NetworkTierWrites: Sendable {
    private struct State {
        /// Each key's last operation, while it runs.
        var lastByKey: [CacheKey: (id: UInt64, task: Task<Void, Never>)] = [:]
        /// The last removal of everything, while it runs.
        var lastRemoveAll: (id: UInt64, task: Task<Void, Never>)?
        var lastID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Runs `operation` on `key` after the key's operations sent before it (and the removal of
    /// everything sent before it).
    func send(_ key: CacheKey, _ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.lastID += 1
            let id = state.lastID
            let previous = state.lastByKey[key]?.task ?? state.lastRemoveAll?.task
            let task = Task {
                await previous?.value
                await operation()
                self.finished(key, id)
            }
            state.lastByKey[key] = (id, task)
        }
    }

    /// Runs `operation`, a removal of everything, after every operation sent before it.
    func sendRemovingAll(_ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.lastID += 1
            let id = state.lastID
            let previous = state.lastByKey.values.map(\.task) + (state.lastRemoveAll.map { [$0.task] } ?? [])
            let task = Task {
                for earlier in previous { await earlier.value }
                await operation()
                self.finished(nil, id)
            }
            state.lastByKey = [:]
            state.lastRemoveAll = (id, task)
        }
    }

    /// Waits until every operation sent so far has run.
    func waitForAll() async {
        let running = state.withLock { state in
            state.lastByKey.values.map(\.task) + (state.lastRemoveAll.map { [$0.task] } ?? [])
        }
        for task in running { await task.value }
    }

    /// Forgets a finished operation, unless another was sent after it.
    private func finished(_ key: CacheKey?, _ id: UInt64) {
        state.withLock { state in
            if let key {
                if state.lastByKey[key]?.id == id { state.lastByKey[key] = nil }
            } else if state.lastRemoveAll?.id == id {
                state.lastRemoveAll = nil
            }
        }
    }
}
