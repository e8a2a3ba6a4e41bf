import Synchronization

/// Keys (as a disk tier stores them) whose entry must read as a miss although its record is
/// still stored: a refused or failed store, or a removal, could not write the deletion of the
/// older record (no room on a full disk, since a deletion writes too: SQLite's WAL, LMDB's
/// copy-on-write pages; another process holding the write lock; an I/O error), and the tier's
/// contract is that no older value is read after either. The next write transaction that
/// succeeds deletes them (the tier takes a snapshot under its write lock, deletes those keys in
/// the transaction, and forgets them once it has committed). Only this process's tier hides
/// them: other processes sharing the store read the record until it is deleted.
package final class HiddenKeys: Sendable {
    private let keys = Locked<Set<[UInt8]>>([])
    /// How many keys are hidden, read without the lock: a lookup takes the lock only when some are.
    private let count = Atomic<Int>(0)

    package init() {}

    /// Whether the entry stored under `key` must read as a miss (`key` is made only when some
    /// key is hidden).
    package func hides(_ key: @autoclosure () -> [UInt8]) -> Bool {
        guard count.load(ordering: .acquiring) > 0 else { return false }
        let bytes = key()
        return keys.withLock { $0.contains(bytes) }
    }

    package func hide(_ key: [UInt8]) {
        keys.withLock {
            $0.insert(key)
            count.store($0.count, ordering: .releasing)
        }
    }

    /// The hidden keys, for a write transaction to delete.
    package func snapshot() -> [[UInt8]] {
        guard count.load(ordering: .acquiring) > 0 else { return [] }
        return keys.withLock { Array($0) }
    }

    /// Forgets `deleted`, whose rows a committed transaction deleted.
    package func forget(_ deleted: [[UInt8]]) {
        guard !deleted.isEmpty else { return }
        keys.withLock {
            $0.subtract(deleted)
            count.store($0.count, ordering: .releasing)
        }
    }

    package func removeAll() {
        keys.withLock {
            $0.removeAll()
            count.store(0, ordering: .releasing)
        }
    }
}
