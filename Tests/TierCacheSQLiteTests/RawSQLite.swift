import CSQLite
import Foundation
import Testing

/// Edits a store's database directly, as damage, another program or an older version would. The
/// tier must be closed (or not yet opened).
func rawSQLite(_ file: URL, _ sql: String) throws {
    var handle: OpaquePointer?
    try #require(sqlite3_open(file.path, &handle) == SQLITE_OK)
    defer { sqlite3_close(handle) }
    var message: UnsafeMutablePointer<CChar>?
    let status = sqlite3_exec(handle, sql, nil, nil, &message)
    let text = message.map { String(cString: $0) } ?? ""
    sqlite3_free(message)
    try #require(status == SQLITE_OK, "\(sql): \(text)")
}

/// Empties a store as another process's reset does (SQLite's `SQLITE_DBCONFIG_RESET_DATABASE` and
/// `VACUUM`), and stops there: what that process leaves until it makes the schema again, or for
/// good if it dies first. An open tier may keep using the file.
func emptyAsAnotherProcessWould(_ file: URL) throws {
    var handle: OpaquePointer?
    try #require(sqlite3_open(file.path, &handle) == SQLITE_OK)
    defer { sqlite3_close(handle) }
    tiercache_sqlite3_reset_database(handle, 1)
    let status = sqlite3_exec(handle, "VACUUM", nil, nil, nil)
    tiercache_sqlite3_reset_database(handle, 0)
    try #require(status == SQLITE_OK, "VACUUM: \(String(cString: sqlite3_errmsg(handle)))")
}

/// The store's database file in `directory`.
func databaseFile(_ directory: URL) -> URL {
    directory.appendingPathComponent("cache.sqlite")
}

/// A file's size in bytes, 0 when absent.
func fileSize(_ url: URL) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
}

/// The root page number of table or index `name` in the database `file`.
func rootPage(of name: String, in file: URL) throws -> Int {
    try integer("SELECT rootpage FROM sqlite_schema WHERE name = '\(name)'", in: file)
}

/// How many rows the store's `entries` table in `file` holds.
func rowCount(in file: URL) throws -> Int {
    try integer("SELECT count(*) FROM entries", in: file)
}

/// The first column of the first row `sql` selects in the database `file`, as an integer.
private func integer(_ sql: String, in file: URL) throws -> Int {
    var handle: OpaquePointer?
    try #require(sqlite3_open(file.path, &handle) == SQLITE_OK)
    defer { sqlite3_close(handle) }
    var statement: OpaquePointer?
    try #require(sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK)
    defer { sqlite3_finalize(statement) }
    try #require(sqlite3_step(statement) == SQLITE_ROW, "no row for \(sql) in \(file.path)")
    return Int(sqlite3_column_int64(statement, 0))
}
