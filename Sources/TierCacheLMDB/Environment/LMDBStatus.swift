import CLMDB
import Foundation
import TierCache

/// Turns LMDB's (and the OS's) return codes into `TierCacheError`s.
enum LMDBStatus {
    static func message(_ code: Int32) -> String {
        guard let text = mdb_strerror(code) else { return "LMDB error \(code)" }
        return String(cString: text)
    }

    static func error(_ code: Int32, _ what: String, path: String) -> TierCacheError {
        let underlying = "\(message(code)) [\(code)]"
        // LMDB reports a short write (what a full file system, or the file-size limit, gives a
        // large write) as EIO.
        if code == EIO, isFileSystemNearlyFull(path) {
            return TierCacheError(.diskFull, "\(what) failed: no space left for \(path)", underlying: underlying)
        }
        if code == EIO, isAtFileSizeLimit(path) {
            return TierCacheError(
                .diskFull, "\(what) failed: the store reached the process's file-size limit (RLIMIT_FSIZE)",
                underlying: underlying)
        }
        switch code {
        case ENOSPC, EDQUOT, EFBIG:
            return TierCacheError(.diskFull, "\(what) failed: no space left for \(path)", underlying: underlying)
        case EACCES, EPERM, EROFS:
            return TierCacheError(
                .permissionDenied, "\(what) failed: no permission to write \(path)", underlying: underlying)
        case ENOTDIR:
            return TierCacheError(.notADirectory, "\(path) is not a directory", underlying: underlying)
        case MDB_INVALID, MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_BAD_TXN:
            return TierCacheError(
                .damagedStore, "\(what) failed: the store at \(path) is damaged", underlying: underlying)
        case MDB_PANIC:
            // A commit failed to write its meta page (EIO, or a copy-on-write file system with no
            // room to overwrite it): LMDB marks the environment unusable, and every later
            // transaction of this process fails, until the environment is opened again.
            return TierCacheError(
                .storageFailure,
                "\(what) failed: a write of the store at \(path) failed fatally earlier in this process (LMDB's "
                    + "MDB_PANIC: a meta page could not be written); every tier on it must be closed and the store "
                    + "opened again (or the process restarted)",
                underlying: underlying)
        case MDB_READERS_FULL:
            return TierCacheError(
                .storageFailure,
                "\(what) failed: every reader slot of \(path) is taken; raise LMDBTier.Configuration.maxReaders",
                underlying: underlying)
        case MDB_VERSION_MISMATCH:
            return TierCacheError(
                .incompatibleVersion, "the store at \(path) was written by another LMDB version", underlying: underlying
            )
        default:
            return TierCacheError(.storageFailure, "\(what) failed for \(path)", underlying: underlying)
        }
    }

    /// Whether the store's data file is within 1 MiB of the process's file-size limit.
    private static func isAtFileSizeLimit(_ path: String) -> Bool {
        #if os(Linux)
        var limit = rlimit()
        // RLIM_INFINITY is all bits set.
        guard getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return false }
        var status = stat()
        guard stat(path + "/data.mdb", &status) == 0 else { return false }
        return UInt64(status.st_size) + (1 << 20) >= UInt64(limit.rlim_cur)
        #else
        return false
        #endif
    }

    /// Whether the file system holding `path` has less than 1 MiB free for this user.
    private static func isFileSystemNearlyFull(_ path: String) -> Bool {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return false }
        return UInt64(stats.f_bavail) * UInt64(stats.f_frsize) < 1 << 20
    }

    @inline(__always)
    static func check(_ code: Int32, _ what: @autoclosure () -> String, path: String) throws(TierCacheError) {
        guard code == MDB_SUCCESS else { throw error(code, what(), path: path) }
    }
}
