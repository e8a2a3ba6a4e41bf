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
        guard let count = Int32(exactly: bytes.count) else { throw Self.tooBig(bytes.count) }
        let status = bytes.withUnsafeBytes { buffer in
            // An empty blob still needs a non-null pointer, or SQLite binds NULL.
            tiercache_sqlite3_bind_blob_transient(
                pointer, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), count)
        }
        guard status == SQLITE_OK else { throw connection.failure(status, "cannot bind a blob") }
    }

    private static func tooBig(_ count: Int) -> SQLiteFailure {
        SQLiteFailure(code: SQLITE_TOOBIG, message: "a blob of \(count) bytes is over SQLite's limit")
    }

    /// Binds `string`'s UTF-8 bytes, as a blob, to parameter `index` (1-based); SQLite copies them.
    func bind(utf8 string: String, at index: Int32) throws(SQLiteFailure) {
        var string = string
        guard let count = Int32(exactly: string.utf8.count) else { throw Self.tooBig(string.utf8.count) }
        let status = string.withUTF8 { buffer in
            tiercache_sqlite3_bind_blob_transient(
                pointer, index, buffer.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(bitPattern: 1), count)
        }
        guard status == SQLITE_OK else { throw connection.failure(status, "cannot bind a blob") }
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
    /// `body` reads it in place, without a copy.
    func withBlob<T>(at index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        // sqlite3_column_blob first, then sqlite3_column_bytes, as SQLite's documentation orders them.
        let base = sqlite3_column_blob(pointer, index)
        let count = Int(sqlite3_column_bytes(pointer, index))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? base : nil, count: count))
    }

    /// Column `index` (0-based) of the current row as a blob, copied.
    func blob(at index: Int32) -> [UInt8] {
        withBlob(at: index) { [UInt8]($0) }
    }
}
