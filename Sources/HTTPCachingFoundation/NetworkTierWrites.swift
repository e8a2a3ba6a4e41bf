@_spi(TierCacheInternals) import TierCache

/// The writes and removals ``TieredURLCache`` sends its network tiers, in the background (as
/// `URLCache`'s API cannot wait for them), each key's in the order they were made: a write waits
/// for the key's previous one, and a removal of everything for all before it (and writes after it
/// for it). Writes of different keys go at once. (Detached tasks, one per write, reached the
/// tier in any order: a removal before the store it followed, an older value after a newer one.)
///
/// The bytes of the entries waiting are bounded by a budget: a writer ``reserve(_:)``s an entry's
/// bytes before it sends the write, and they are given back when the write has run. While a
/// network tier is slow or unreachable (each operation waiting for its timeout), writes past the
/// budget are the writer's to turn into removals.
final class NetworkTierWrites: Sendable {
    private struct State {
        /// Each key's last operation, while it runs.
        var lastByKey: [CacheKey: (id: UInt64, task: Task<Void, Never>)] = [:]
        /// The last removal of everything, while it runs.
        var lastRemoveAll: (id: UInt64, task: Task<Void, Never>)?
        var lastID: UInt64 = 0
        /// The bytes reserved by writes not yet run.
        var reservedBytes = 0
    }

    private let state = Locked(State())
    /// The most bytes ``reserve(_:)`` lets be reserved at once.
    let budget: Int

    init(budget: Int) {
        self.budget = budget
    }

    /// Reserves `bytes` for a write about to be sent, if the budget has room for them; a write
    /// sent with them releases them when it has run.
    func reserve(_ bytes: Int) -> Bool {
        state.withLock { state in
            guard bytes <= budget - state.reservedBytes else { return false }
            state.reservedBytes += bytes
            return true
        }
    }

    /// Runs `operation` on `key` after the key's operations sent before it (and the removal of
    /// everything sent before it), then releases `releasing` reserved bytes.
    func send(_ key: CacheKey, releasing: Int = 0, _ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.lastID += 1
            let id = state.lastID
            let previous = state.lastByKey[key]?.task ?? state.lastRemoveAll?.task
            let task = Task {
                await previous?.value
                await operation()
                self.finished(key, id, releasing: releasing)
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
                self.finished(nil, id, releasing: 0)
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

    /// Forgets a finished operation, unless another was sent after it, and releases its bytes.
    private func finished(_ key: CacheKey?, _ id: UInt64, releasing: Int) {
        state.withLock { state in
            state.reservedBytes -= releasing
            if let key {
                if state.lastByKey[key]?.id == id { state.lastByKey[key] = nil }
            } else if state.lastRemoveAll?.id == id {
                state.lastRemoveAll = nil
            }
        }
    }
}
