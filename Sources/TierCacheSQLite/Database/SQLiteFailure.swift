import CSQLite
import TierCache

/// A result code SQLite returned, with its message: what the connection and statements throw,
/// before the tier turns it into a `TierCacheError`.
struct SQLiteFailure: Error, CustomStringConvertible {
    /// The extended result code.
    let code: Int32
    /// SQLite's message for it, and what was being done.
    let message: String

    /// The primary result code (the low byte of the extended one).
    var primaryCode: Int32 { code & 0xFF }

    /// The file is damaged (`SQLITE_CORRUPT`) or is not a database (`SQLITE_NOTADB`).
    var isDamage: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// The disk, the quota or the file-size limit is used up (`SQLITE_FULL`, or a write the
    /// operating system refused with `EFBIG` or `EDQUOT`, which SQLite reports as a write error).
    var isOutOfSpace: Bool { primaryCode == SQLITE_FULL || code == SQLITE_IOERR | (3 << 8) }  // SQLITE_IOERR_WRITE

    var description: String { "\(message) (SQLite result \(code))" }

    /// The `TierCacheError` the tier throws for this failure while working on `path`.
    func tierError(at path: String) -> TierCacheError {
        let code: TierCacheError.Code =
            if isDamage {
                .damagedStore
            } else if isOutOfSpace {
                .diskFull
            } else if primaryCode == SQLITE_READONLY || primaryCode == SQLITE_PERM || primaryCode == SQLITE_CANTOPEN {
                .permissionDenied
            } else {
                .storageFailure
            }
        return TierCacheError(code, "SQLite store at \(path): \(message)", underlying: "SQLite result \(self.code)")
    }
}
