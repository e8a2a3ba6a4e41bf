import CSQLite
import Foundation
import TierCache

/// A result code SQLite returned, with its message: what the connection and statements throw,
/// before the tier turns it into a `TierCacheError`.
struct SQLiteFailure: Error, CustomStringConvertible {
    /// The extended result code.
    let code: Int32
    /// SQLite's message for it, and what was being done.
    let message: String
    /// The operating system's error number behind an I/O error, or 0.
    var systemErrno: Int32 = 0

    /// The primary result code (the low byte of the extended one).
    var primaryCode: Int32 { code & 0xFF }

    /// The file is damaged (`SQLITE_CORRUPT`) or is not a database (`SQLITE_NOTADB`).
    var isDamage: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// The disk or the file-size limit is used up: `SQLITE_FULL` (`ENOSPC`), or a write error
    /// (SQLite reports `EFBIG` and `EDQUOT` as one) while the file system has under 1 MiB free or
    /// the database's files reach the process's file-size limit. SQLite keeps no reliable errno
    /// for a failed write, so the tier looks at the space itself: any other write error (`EIO`)
    /// is a failure of the storage, not a lack of room.
    func isOutOfSpace(at path: String) -> Bool {
        if primaryCode == SQLITE_FULL { return true }
        guard code == SQLITE_IOERR | (3 << 8) else { return false }  // SQLITE_IOERR_WRITE
        if [ENOSPC, EFBIG, EDQUOT].contains(systemErrno) { return true }
        let directory = (path as NSString).deletingLastPathComponent
        var fileSystem = statvfs()
        if statvfs(directory, &fileSystem) == 0, UInt64(fileSystem.f_bavail) * UInt64(fileSystem.f_frsize) < 1 << 20 {
            return true
        }
        var limit = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_FSIZE.rawValue)
        #else
        let resource = RLIMIT_FSIZE
        #endif
        // RLIM_INFINITY is all ones on Linux and 2^63 - 1 on Darwin: both are no limit.
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(Int64.max) else { return false }
        let largest =
            [path, path + "-wal"].map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? UInt64) ?? 0 }
            .max() ?? 0
        return largest + (64 << 10) >= UInt64(limit.rlim_cur)
    }

    var description: String {
        "\(message) (SQLite result \(code)\(systemErrno == 0 ? "" : ", errno \(systemErrno)"))"
    }

    /// The `TierCacheError` the tier throws for this failure while working on `path`.
    func tierError(at path: String) -> TierCacheError {
        let code: TierCacheError.Code =
            if isDamage {
                .damagedStore
            } else if isOutOfSpace(at: path) {
                .diskFull
            } else if primaryCode == SQLITE_READONLY || primaryCode == SQLITE_PERM || primaryCode == SQLITE_CANTOPEN {
                .permissionDenied
            } else {
                .storageFailure
            }
        return TierCacheError(code, "SQLite store at \(path): \(message)", underlying: description)
    }
}
