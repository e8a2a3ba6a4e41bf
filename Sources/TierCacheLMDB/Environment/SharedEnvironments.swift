import CLMDB
import Foundation
@_spi(TierCacheInternals) import TierCache

/// One LMDB environment per store per process, shared by every tier and inspection that opens the
/// store in the process.
///
/// LMDB must not open one store twice in a process (lmdb.h: "Do not have open an LMDB database
/// twice in the same process at the same time"). It learns whether it is a store's first user from
/// `fcntl` locks on `lock.mdb`, and a process never conflicts with its own locks: a second open
/// took itself for the first and initialised the lock file again under the open one, emptying its
/// reader table (so writers could reuse pages its readers were reading) and remaking its write
/// mutex; and closing either dropped the process's locks, so the next process to open the store
/// initialised it again under both.
///
/// Environments are keyed by the directory's device and inode and counted by lease; the last
/// lease's release closes the environment under the table's lock, so a store is never closed
/// while it is being opened again.
enum SharedEnvironments {
    /// What a lease holds: the environment, for as long as the lease lives.
    final class Lease: Sendable {
        /// Unowned: the table's reference keeps it alive while any lease lives, and only the
        /// table's may be the last, so that the environment closes inside the table's lock.
        unowned let environment: LMDBEnvironment
        fileprivate let identity: Identity

        fileprivate init(environment: LMDBEnvironment, identity: Identity) {
            self.environment = environment
            self.identity = identity
        }

        deinit { SharedEnvironments.release(identity) }
    }

    fileprivate struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private struct Shared {
        var environment: LMDBEnvironment
        var readOnly: Bool
        var durability: LMDBTier.Durability
        var leases: Int
    }

    /// `Locked`, the project's `Mutex` that ThreadSanitizer can see (`scripts/tsan`).
    private static let table = Locked<[Identity: Shared]>([:])

    /// The environment of the store in `directory`: the one already open in this process if any
    /// (a read-only lease takes a writable one), else a new one opened with these settings.
    ///
    /// - Throws: `TierCacheError` when LMDB cannot open the store, or with `.storageFailure` when
    ///   a writer asks while only an inspection holds it, read-only.
    static func lease(
        directory: URL, mapSize: Int?, durability: LMDBTier.Durability, maxReaders: Int, readOnly: Bool
    ) throws(TierCacheError) -> Lease {
        var status = stat()
        guard stat(directory.path, &status) == 0 else {
            throw LMDBStatus.error(errno, "reading the directory", path: directory.path)
        }
        let identity = Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        // The lease is made last, once nothing can throw: its release takes this lock.
        let environment = try table.withLock { table throws(TierCacheError) -> LMDBEnvironment in
            if var shared = table[identity] {
                if shared.readOnly, !readOnly {
                    throw TierCacheError(
                        .storageFailure,
                        "the store at \(directory.path) is open read-only in this process (an inspection); open the tier once it returns"
                    )
                }
                // Every tier gets at least the durability it asked for: the shared environment
                // syncs as the most durable of them asks. (The reader table's size is whichever
                // opener made the lock file's, in this process or another: LMDB's rule.)
                if !readOnly, durability.syncsMore(than: shared.durability) {
                    try shared.environment.setDurability(durability)
                    shared.durability = durability
                }
                shared.leases += 1
                table[identity] = shared
                return shared.environment
            }
            let environment = try LMDBTier.openEnvironment(
                directory: directory, mapSize: mapSize, durability: durability, maxReaders: maxReaders,
                readOnly: readOnly)
            table[identity] = Shared(environment: environment, readOnly: readOnly, durability: durability, leases: 1)
            return environment
        }
        return Lease(environment: environment, identity: identity)
    }

    /// Ends a lease; the last one closes the environment (releasing it inside the lock, where
    /// its `deinit` closes LMDB's handle).
    fileprivate static func release(_ identity: Identity) {
        table.withLock { table in
            guard var shared = table[identity] else { return }
            shared.leases -= 1
            table[identity] = shared.leases > 0 ? shared : nil
        }
    }
}

extension LMDBTier.Durability {
    /// Whether this mode syncs more than `other` (`full`, then `metadataAsync`, then `none`).
    func syncsMore(than other: Self) -> Bool { rank > other.rank }

    private var rank: Int {
        switch self {
        case .none: 0
        case .metadataAsync: 1
        case .full: 2
        }
    }

    /// The LMDB flags of this mode (`MDB_NOSYNC`, `MDB_NOMETASYNC` or none).
    var environmentFlags: UInt32 {
        switch self {
        case .full: 0
        case .metadataAsync: UInt32(MDB_NOMETASYNC)
        case .none: UInt32(MDB_NOSYNC)
        }
    }
}
