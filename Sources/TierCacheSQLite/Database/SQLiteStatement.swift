import CSQLite

/// A prepared statement in use: parameters bound, rows stepped through, columns read.
///
/// Only ``SQLiteConnection``'s `withStatement` methods make one, and reset or finalize the
/// statement afterwards, so a statement never outlives its use.
struct SQLiteStatement {
    let pointer: OpaquePointer
    let connection: SQLiteConnection

    /// Binds `bytes` to parameter `index` (1-based); SQLite copies them.
    func bind(_ bytes: [UInt8], at index: Int32) throws(SQLiteFailure) {
        if let failure = bytes.withUnsafeBytes({ bindBlob($0, at: index) }) { throw failure }
    }

    /// Binds `string`'s UTF-8 bytes, as a blob, to parameter `index` (1-based); SQLite copies them.
    func bind(utf8 string: String, at index: Int32) throws(SQLiteFailure) {
        var string = string
        if let failure = string.withUTF8({ bindBlob(UnsafeRawBufferPointer($0), at: index) }) { throw failure }
    }

    /// Binds `buffer` as a blob; the failure, if any (returned: the buffer closures that call this
    /// do not pass typed errors through).
    private func bindBlob(_ buffer: UnsafeRawBufferPointer, at index: Int32) -> SQLiteFailure? {
        guard let count = Int32(exactly: buffer.count) else {
            return SQLiteFailure(code: SQLITE_TOOBIG, message: "a blob of \(buffer.count) bytes is over SQLite's limit")
        }
        // An empty blob still needs a non-null pointer, or SQLite binds NULL.
        let status = tiercache_sqlite3_bind_blob_transient(
            pointer, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), count)
        return status == SQLITE_OK ? nil : connection.failure(status, "cannot bind a blob")
    }

    /// Binds `value` to parameter `index` (1-based).
    func bind(_ value: Int64, at index: Int32) throws(SQLiteFailure) {
        let status = sqlite3_bind_int64(pointer, index, value)
        guard status == SQLITE_OK else { throw connection.failure(status, "cannot bind an integer") }
    }

    /// Steps to the next row: `true` on a row, `false` when done.
    func step() throws(SQLiteFailure) -> Bool {
        switch sqlite3_step(pointer) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status: throw connection.failure(status, "a statement failed")
        }
    }

    /// Steps a statement that returns no rows.
    func run() throws(SQLiteFailure) {
        _ = try step()
    }

    /// Column `index` (0-based) of the current row as an integer.
    func integer(at index: Int32) -> Int64 { sqlite3_column_int64(pointer, index) }

    /// Column `index` (0-based) of the current row as a blob, valid until the next step or reset:
    /// `body` reads it in place, without a copy. Throws `SQLITE_NOMEM` when SQLite could not make
    /// the blob (a null pointer for a non-empty value), which a buffer must not be built from.
    func withBlob<T>(at index: Int32, _ body: (UnsafeRawBufferPointer) -> T) throws(SQLiteFailure) -> T {
        // sqlite3_column_blob first, then sqlite3_column_bytes, as SQLite's documentation orders them.
        let base = sqlite3_column_blob(pointer, index)
        let count = Int(sqlite3_column_bytes(pointer, index))
        guard count == 0 || base != nil else {
            throw SQLiteFailure(code: SQLITE_NOMEM, message: "out of memory reading a \(count)-byte value")
        }
        return body(UnsafeRawBufferPointer(start: count > 0 ? base : nil, count: count))
    }

    /// Column `index` (0-based) of the current row as a blob, copied.
    func blob(at index: Int32) throws(SQLiteFailure) -> [UInt8] {
        try withBlob(at: index) { [UInt8]($0) }
    }
}
