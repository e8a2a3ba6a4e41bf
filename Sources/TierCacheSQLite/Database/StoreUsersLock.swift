import Foundation
import TierCache
import TierCacheRecords

/// A shared `flock` on a sidecar file (`cache.sqlite.users`) that every open tier holds, so that
/// an opener can tell whether it is the store's only user before it replaces the database file.
///
/// Truncating a database other processes have open would pull their pages and write-ahead log
/// from under them; only a process that can take the lock exclusively (no other tier holds it)
/// may. The lock goes with the file descriptor, so a killed process never leaves it held.
final class StoreUsersLock: Sendable {
    private let descriptor: Int32

    /// Opens (creating, owner-only) the sidecar of `file` and takes the lock shared.
    init(beside file: URL) throws(TierCacheError) {
        let path = file.path + ".users"
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let failure = errno
            throw TierCacheError(
                TierCacheError.Code(fileSystemErrno: failure), "cannot open \(path)",
                underlying: String(cString: strerror(failure)))
        }
        guard flock(opened, LOCK_SH) == 0 else {
            close(opened)
            throw TierCacheError(.storageFailure, "cannot lock \(path)", underlying: "errno \(errno)")
        }
        descriptor = opened
    }

    deinit {
        close(descriptor)
    }

    /// Runs `body` holding the lock exclusively if no other tier holds it, and returns its result;
    /// returns `nil` without running it when another tier has the store open. The lock is shared
    /// again afterwards.
    func whileSoleUser<T>(_ body: () throws -> T) rethrows -> T? {
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return nil }
        defer { flock(descriptor, LOCK_SH) }
        return try body()
    }
}
