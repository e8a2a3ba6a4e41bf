import Synchronization
@_spi(TierCacheInternals) import TierCache

/// Keys whose entry must read as a miss although its row is still stored: a refused store or a
/// removal found no room on a full disk to delete the older row (in WAL mode a deletion writes
/// too). The next write transaction that succeeds deletes them (``SQLiteTier`` takes a snapshot
/// before, and forgets those after the commit).
final class HiddenKeys: Sendable {
    private let keys = Locked<Set<[UInt8]>>([])
    /// How many keys are hidden, read without the lock: a lookup takes the lock only when some are.
    private let count = Atomic<Int>(0)

    /// Whether `key`'s entry must read as a miss.
    func hides(_ key: CacheKey) -> Bool {
        guard count.load(ordering: .acquiring) > 0 else { return false }
        let bytes = Array(key.rawValue.utf8)
        return keys.withLock { $0.contains(bytes) }
    }

    func hide(_ key: [UInt8]) {
        keys.withLock {
            $0.insert(key)
            count.store($0.count, ordering: .releasing)
        }
    }

    /// The hidden keys, for a write transaction to delete.
    func snapshot() -> [[UInt8]] {
        guard count.load(ordering: .acquiring) > 0 else { return [] }
        return keys.withLock { Array($0) }
    }

    /// Forgets `deleted`, whose rows a committed transaction deleted.
    func forget(_ deleted: [[UInt8]]) {
        guard !deleted.isEmpty else { return }
        keys.withLock {
            $0.subtract(deleted)
            count.store($0.count, ordering: .releasing)
        }
    }

    func removeAll() {
        keys.withLock {
            $0.removeAll()
            count.store(0, ordering: .releasing)
        }
    }
}
