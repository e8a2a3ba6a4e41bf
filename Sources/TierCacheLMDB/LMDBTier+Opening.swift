import CLMDB
import Foundation
import TierCache
import TierCacheRecords

extension LMDBTier {
    /// The smallest capacity accepted: 1 MiB, room for LMDB's own pages and a useful 5% entry.
    public static let minimumCapacity = DiskCapacity.minimum

    /// The files LMDB keeps in the tier's directory.
    static let fileNames = ["data.mdb", "lock.mdb"]

    /// Version of the tier's own layout (databases and record format), kept in the store.
    static let layoutVersion: UInt64 = 1

    /// Deletes the store in `directory` (its `data.mdb` and `lock.mdb`) and clears its "being
    /// checked" mark, leaving other files and the directory itself.
    ///
    /// - Throws: `invalidConfiguration` while a tier, in this process or another, has the store
    ///   open: deleted under it, the open tier went on writing to the deleted files (holding up
    ///   to its capacity of disk), and a later opener in another process made a new store the two
    ///   never shared. Close every tier on it first.
    public static func destroy(directory: URL) throws(TierCacheError) {
        // Openers take turns under the check file's lock (`CheckMarker`), taken here first: an
        // opener that found the store in use holds no lock on the users file until it finishes
        // opening, and the store was deleted under it once the other tiers had closed.
        let check = open(directory.appendingPathComponent(CheckMarker.markFileName).path, O_RDWR | O_CLOEXEC)
        defer { if check >= 0 { close(check) } }
        while check >= 0, flock(check, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw LMDBStatus.error(errno, "locking \(CheckMarker.markFileName)", path: directory.path)
            }
        }
        // Every open tier holds this file's lock shared for its lifetime (`CheckMarker`); held
        // exclusively here until the files are gone. No file: no tier ever opened the store.
        let users = open(directory.appendingPathComponent(CheckMarker.usersFileName).path, O_RDONLY | O_CLOEXEC)
        defer { if users >= 0 { close(users) } }
        guard users < 0 || flock(users, LOCK_EX | LOCK_NB) == 0 else {
            throw TierCacheError(
                .invalidConfiguration,
                "the store at \(directory.path) is open in this or another process; close every tier on it first")
        }
        try deleteStoreFiles(in: directory)
    }

    /// ``destroy(directory:)`` without its check, for an opener that holds the store alone (its
    /// `CheckMarker` says so).
    static func deleteStoreFiles(in directory: URL) throws(TierCacheError) {
        CheckMarker.clearMark(in: directory)
        for name in fileNames {
            let path = directory.appendingPathComponent(name).path
            guard unlink(path) == 0 || errno == ENOENT else {
                throw LMDBStatus.error(errno, "deleting \(name)", path: directory.path)
            }
        }
    }

    /// Opens (creating when absent) the environment in `directory`.
    static func openEnvironment(
        directory: URL, mapSize: Int?, durability: Durability, maxReaders: Int, readOnly: Bool
    ) throws(TierCacheError) -> LMDBEnvironment {
        let path = directory.path
        var handle: OpaquePointer?
        try LMDBStatus.check(mdb_env_create(&handle), "creating an environment", path: path)
        guard let handle else { throw TierCacheError(.storageFailure, "LMDB returned no environment for \(path)") }
        var flags = UInt32(MDB_NOTLS | MDB_NORDAHEAD) | durability.environmentFlags
        if readOnly { flags |= UInt32(MDB_RDONLY) }
        var rc = mdb_env_set_maxdbs(handle, 8)
        if rc == MDB_SUCCESS, let mapSize { rc = mdb_env_set_mapsize(handle, mapSize) }
        if rc == MDB_SUCCESS { rc = mdb_env_set_maxreaders(handle, UInt32(clamping: maxReaders)) }
        if rc == MDB_SUCCESS { rc = mdb_env_open(handle, path, flags, 0o600) }
        guard rc == MDB_SUCCESS else {
            mdb_env_close(handle)
            throw LMDBStatus.error(rc, "opening the store", path: path)
        }
        // From here the environment object owns the handle and closes it when released.
        let environment = try LMDBEnvironment(handle: handle, path: path, readOnly: readOnly)
        if !readOnly { environment.clearStaleReaders() }
        return environment
    }

    /// Checks (and on first use, writes) the layout version and capacity kept in the store, and
    /// that a store once opened with encryption is not opened without it (`encrypting`).
    static func checkLayout(
        of environment: LMDBEnvironment, capacity: Int, encrypting: Bool
    ) throws(TierCacheError) {
        let path = environment.path
        do {
            try environment.write { txn in
                switch try txn.metaValue("layout") {
                case nil:
                    try txn.setMetaValue("layout", layoutVersion)
                    try txn.setMetaValue("capacity", UInt64(capacity))
                case layoutVersion?:
                    break
                case let other?:
                    throw TierCacheError(
                        .incompatibleVersion,
                        "the store at \(path) has layout version \(other); this TierCache reads version \(layoutVersion)"
                    )
                }
                let stored = try txn.metaValue("capacity") ?? UInt64(capacity)
                guard stored == UInt64(capacity) else {
                    throw TierCacheError(
                        .invalidConfiguration,
                        "the store at \(path) was created with capacity \(stored) bytes, not \(capacity); "
                            + "open it with that capacity, or delete it first with LMDBTier.destroy(directory:)")
                }
                // Opened without its keys, an encrypted store would refuse every sealed record and
                // go on storing new ones in the clear: one misconfigured open (a keychain read
                // that failed) would undo encryption at rest for whatever is cached after it.
                let markedEncrypted = try txn.metaValue(LMDBTier.encryptedMark) != nil
                guard encrypting || !markedEncrypted else {
                    throw TierCacheError(
                        .invalidConfiguration,
                        "the store at \(path) is encrypted; open it with its keys (Configuration.encryption), "
                            + "or delete it first with LMDBTier.destroy(directory:)")
                }
            }
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(.storageFailure, "could not initialise the store at \(path)", underlying: "\(error)")
        }
    }
}
