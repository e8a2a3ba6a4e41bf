import CSQLite

/// One connection to the store's database file, with its prepared statements.
///
/// `@unchecked Sendable` is safe because a connection is only ever used by one thread at a time:
/// the writer connection is used under ``SQLiteTier``'s writer lock, and reader connections are
/// checked out of a ``ReaderPool`` (removed from it under its lock) before use and checked back in
/// after. SQLite itself is built thread-safe, so even a connection closed on another thread than
/// the one that used it is sound.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// The statements of ``Query``, by raw value, prepared on first use.
    private var statements = [OpaquePointer?](repeating: nil, count: Query.allCases.count)
    let path: String

    /// Opens (with `creating`, creating when absent) the database at `path`, with a busy timeout for the locks
    /// other processes hold, defensive mode (no writes to the schema table) and cell-size checks
    /// (damaged pages are found before they are trusted).
    init(path: String, busyTimeoutMilliseconds: Int32, creating: Bool) throws(SQLiteFailure) {
        // The @unchecked Sendable above relies on a thread-safe build (every platform's is).
        guard sqlite3_threadsafe() != 0 else {
            throw SQLiteFailure(code: SQLITE_MISUSE, message: "this SQLite was built without thread safety")
        }
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (creating ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw SQLiteFailure(code: status, message: "cannot open: \(message)")
        }
        handle = opened
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        tiercache_sqlite3_enable_defensive(handle)
    }

    /// The first `count` bytes of the database file, read through SQLite's own handle on it; nil
    /// when the file is shorter (new, or emptied) or cannot be read.
    func fileStart(count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBytes { buffer in
            tiercache_sqlite3_read_main_file(handle, buffer.baseAddress, Int32(count))
        }
        return status == SQLITE_OK ? bytes : nil
    }

    deinit {
        for statement in statements { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs `sql` (one or more statements, no parameters, no rows wanted).
    func execute(_ sql: String) throws(SQLiteFailure) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw SQLiteFailure(
                code: sqlite3_extended_errcode(handle), message: text, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// The first column of the first row of `sql` as an integer, or `nil` without a row.
    func integer(_ sql: String) throws(SQLiteFailure) -> Int64? {
        try withStatement(sql) { statement throws(SQLiteFailure) in
            try statement.step() ? statement.integer(at: 0) : nil
        }
    }

    /// The statement of `query`, prepared on first use and kept.
    @discardableResult
    func prepare(_ query: Query) throws(SQLiteFailure) -> OpaquePointer {
        if let cached = statements[query.rawValue] { return cached }
        let prepared = try prepare(query.sql, persistent: true)
        statements[query.rawValue] = prepared
        return prepared
    }

    /// Runs `body` with the statement of `query` (prepared once, then reset after each use).
    func withStatement<T>(
        _ query: Query, _ body: (inout SQLiteStatement) throws(SQLiteFailure) -> T
    ) throws(SQLiteFailure) -> T {
        let prepared = try prepare(query)
        var statement = SQLiteStatement(pointer: prepared, connection: self)
        defer {
            sqlite3_reset(prepared)
            // The bound values are SQLite's copies: a store's record (up to half the tier's
            // capacity) stayed in memory until the statement's next use.
            sqlite3_clear_bindings(prepared)
        }
        return try body(&statement)
    }

    /// Runs `body` with `sql` prepared for this one use (set-up and pragmas).
    func withStatement<T>(
        _ sql: String, _ body: (inout SQLiteStatement) throws(SQLiteFailure) -> T
    ) throws(SQLiteFailure) -> T {
        let prepared = try prepare(sql, persistent: false)
        defer { sqlite3_finalize(prepared) }
        var statement = SQLiteStatement(pointer: prepared, connection: self)
        return try body(&statement)
    }

    private func prepare(_ sql: String, persistent: Bool) throws(SQLiteFailure) -> OpaquePointer {
        var made: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let status = sqlite3_prepare_v3(handle, sql, -1, flags, &made, nil)
        guard status == SQLITE_OK, let made else { throw failure(status, "cannot prepare \(sql)") }
        return made
    }

    /// Runs `body` in a write transaction: `BEGIN IMMEDIATE` takes the write lock up front, so two
    /// writers never deadlock upgrading a read lock. Commits when `body` returns, rolls back when
    /// it throws. The three statements are prepared once, like the tier's queries: parsing them
    /// for every store cost more than the store's own statements.
    func writeTransaction<T>(_ body: () throws(SQLiteFailure) -> T) throws(SQLiteFailure) -> T {
        // A transaction left open by a ROLLBACK that failed (an I/O error) would make every BEGIN
        // fail: end it first.
        if sqlite3_get_autocommit(handle) == 0 { try run(.rollback) }
        try run(.beginWriting)
        let result: T
        do {
            result = try body()
        } catch {
            try? run(.rollback)
            throw error
        }
        do {
            try run(.commit)
        } catch {
            // A failed commit (a full disk) leaves the transaction open: end it.
            if sqlite3_get_autocommit(handle) == 0 { try? run(.rollback) }
            throw error
        }
        return result
    }

    /// Runs `query`, which takes no parameters and returns no rows.
    private func run(_ query: Query) throws(SQLiteFailure) {
        try withStatement(query) { statement throws(SQLiteFailure) in try statement.run() }
    }

    /// Empties the database in place, even a damaged one, so that every connection (in every
    /// process) sees an empty file: SQLite's documented reset (`SQLITE_DBCONFIG_RESET_DATABASE`
    /// followed by `VACUUM`).
    func resetDatabase() throws(SQLiteFailure) {
        tiercache_sqlite3_reset_database(handle, 1)
        defer { tiercache_sqlite3_reset_database(handle, 0) }
        try execute("VACUUM")
    }

    /// The largest blob or string SQLite accepts on this connection.
    var lengthLimit: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1)) }

    func failure(_ status: Int32, _ context: String) -> SQLiteFailure {
        let code = sqlite3_extended_errcode(handle)
        return SQLiteFailure(
            code: code == SQLITE_OK ? status : code, message: "\(context): \(String(cString: sqlite3_errmsg(handle)))",
            systemErrno: sqlite3_system_errno(handle))
    }
}
