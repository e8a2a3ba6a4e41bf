import CSQLite
import Foundation
import TierCache

/// Opens the store's database: connections set up alike, the schema made or checked, and a
/// damaged or incompatible store emptied (or refused, as the recovery policy says).
struct StoreOpening: Sendable {
    /// `PRAGMA application_id` of a TierCache store ("TCSQ"): tells it from other programs' databases.
    static let applicationID: Int64 = 0x5443_5351
    /// `PRAGMA user_version`: the schema's version.
    static let schemaVersion: Int64 = 1
    /// The oldest SQLite the tier runs on, as `sqlite3_libversion_number()` gives it: 3.35.0
    /// (2021), whose `DELETE … RETURNING` the removals and evictions use (3.33 added the
    /// `sqlite_schema` name the checks read). An older library failed every statement using them
    /// as a syntax error, which opening took for a damaged store, emptying it at every open.
    static let minimumLibraryVersion: Int32 = 3_035_000

    /// Throws when the SQLite library this process runs on (`versionNumber`, `version`) is older
    /// than ``minimumLibraryVersion``.
    static func checkLibrary(
        versionNumber: Int32 = sqlite3_libversion_number(), version: String = String(cString: sqlite3_libversion())
    ) throws(TierCacheError) {
        guard versionNumber >= minimumLibraryVersion else {
            throw TierCacheError(
                .storageFailure,
                "the SQLite tier needs SQLite 3.35.0 or later (for DELETE … RETURNING); this process runs on SQLite \(version)"
            )
        }
    }

    let file: URL
    let capacity: Int
    let durability: SQLiteTier.Durability
    let busyTimeoutMilliseconds: Int32

    /// The writer connection, the lock that says the store is in use, and why the store was
    /// emptied at open, if it was.
    struct Opened {
        let writer: SQLiteConnection
        let users: StoreUsersLock
        let resetReason: String?
    }

    /// A new connection with the store's settings; readers (`creating` false) never create the
    /// file, so a store deleted under them is an error, not an empty database without tables.
    func connect(creating: Bool = false) throws(SQLiteFailure) -> SQLiteConnection {
        let connection = try SQLiteConnection(
            path: file.path, busyTimeoutMilliseconds: busyTimeoutMilliseconds, creating: creating)
        // Before any statement: preparing one reads the schema, and fails on some headers with
        // errors that do not say damage.
        if let problem = headerProblem(connection) { throw SQLiteFailure(code: SQLITE_NOTADB, message: problem) }
        // On Apple platforms `fsync` leaves the drive's own cache unflushed and unordered, and
        // only `F_FULLFSYNC` (these pragmas) makes a write what a power loss cannot undo (SQLite's
        // own documentation); elsewhere they change nothing. With `full`, every commit; with
        // `normal`, the checkpoints at least: a checkpoint's pages must be on the device before
        // the log that held them starts over, or a power loss leaves a database that is neither
        // the old one nor the new (`normal` may lose commits, never consistency). A checkpoint
        // comes once per 4 MiB of log or less, so its cost is spread over many commits.
        try connection.execute(
            """
            PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            PRAGMA fullfsync = \(durability == .full ? "ON" : "OFF");
            PRAGMA checkpoint_fullfsync = ON;
            PRAGMA cell_size_check = ON;
            """)
        return connection
    }

    /// Opens the writer connection and makes or checks the schema.
    func open(recovery: SQLiteTier.RecoveryPolicy) throws(TierCacheError) -> Opened {
        let users = try StoreUsersLock(beside: file)
        let reason: String
        let code: TierCacheError.Code
        var notADatabase = false
        var writer: SQLiteConnection?
        do {
            // Owner-only, like the directory, from its creation: SQLite creates files with 0644,
            // and gives the write-ahead log and shared-memory files it makes later the database
            // file's permissions. A file found here is left as it is: a store made so before, or
            // another program's database, whose permissions are its own (a `chmod` after SQLite
            // opened it changed those, and a crash before it left a store readable by all).
            createOwnerOnlyFile(file.path)
            let connection = try connect(creating: true)
            writer = connection
            try prepare(connection)
            return Opened(writer: connection, users: users, resetReason: nil)
        } catch let failure as SQLiteFailure where failure.isDamage {
            (reason, code) = ("damaged: \(failure.message)", .damagedStore)
            notADatabase = failure.primaryCode == SQLITE_NOTADB
        } catch let failure as SQLiteFailure {
            throw failure.tierError(at: file.path)
        } catch let incompatible as IncompatibleVersion {
            (reason, code) = (
                "schema version \(incompatible.version), this version reads \(Self.schemaVersion)", .incompatibleVersion
            )
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(.storageFailure, "opening \(file.path) failed", underlying: "\(error)")
        }
        guard recovery == .resetDamagedStore else {
            throw TierCacheError(code, "the SQLite store at \(file.path) is \(reason); it was left as it is")
        }
        do {
            let emptied: SQLiteConnection
            if let writer, !notADatabase {
                try writer.resetDatabase()
                emptied = writer
            } else {
                // A file whose header is not a database's cannot be vacuumed: it is replaced, by the
                // store's only user (closing this process's connection first).
                writer = nil
                guard let recreated = try users.whileSoleUser({ () throws(SQLiteFailure) in try recreate() }) else {
                    throw TierCacheError(
                        .damagedStore,
                        "the SQLite store at \(file.path) is \(reason), and another process has it open; it was left as it is"
                    )
                }
                emptied = recreated
            }
            try prepare(emptied)
            return Opened(writer: emptied, users: users, resetReason: reason)
        } catch let error as TierCacheError {
            throw error
        } catch {
            throw TierCacheError(
                .damagedStore, "the SQLite store at \(file.path) is \(reason), and emptying it failed",
                underlying: "\(error)")
        }
    }

    /// What is wrong with the database file's header, if anything: the magic string, file format
    /// versions other than 1 (legacy) and 2 (WAL), or a schema format over 4, with which SQLite
    /// opens a file read-only or not at all ("unsupported file format") rather than calling it
    /// damaged. A file shorter than a header (new, or emptied) is left to SQLite.
    ///
    /// Read through `connection`'s own handle on the file (SQLite opens it lazily, without reading
    /// it): closing a descriptor of our own would drop the POSIX locks of every connection this
    /// process has to the store, such as another tier's on the same directory, and another
    /// process could then checkpoint and delete the write-ahead log under them.
    private func headerProblem(_ connection: SQLiteConnection) -> String? {
        guard let bytes = connection.fileStart(count: 100) else { return nil }
        guard bytes.starts(with: Array("SQLite format 3\0".utf8)) else { return "the file is not a database" }
        guard (1...2).contains(bytes[18]), (1...2).contains(bytes[19]) else {
            return "the header's file format versions are \(bytes[18]) and \(bytes[19])"
        }
        // SQLite reads schema formats 1 to 4 (0 before any table); any other is an "unsupported
        // file format" error at every open, not damage it would report.
        let schemaFormat = bytes[44..<48].reduce(0) { $0 << 8 | UInt32($1) }
        guard schemaFormat <= 4 else { return "the header's schema format is \(schemaFormat)" }
        return nil
    }

    /// An empty store in place of one whose file is not a database, made by its only user (no
    /// connection to it left open anywhere): the database and its write-ahead log truncated, the
    /// shared-memory index deleted, and a connection to the empty database.
    private func recreate() throws(SQLiteFailure) -> SQLiteConnection {
        for path in [file.path, file.path + "-wal"] where truncate(path, 0) != 0 && errno != ENOENT {
            throw SQLiteFailure(code: SQLITE_IOERR, message: "cannot truncate \(path)", systemErrno: errno)
        }
        if unlink(file.path + "-shm") != 0 && errno != ENOENT {
            throw SQLiteFailure(code: SQLITE_IOERR, message: "cannot delete \(file.path)-shm", systemErrno: errno)
        }
        return try connect(creating: true)
    }

    /// Puts the database in WAL mode (a setting stored in the file) unless it is already.
    ///
    /// Switching needs an exclusive lock taken from a shared one, and SQLite answers `SQLITE_BUSY`
    /// at once, without its busy handler, when another connection holds a shared lock too (waiting
    /// could deadlock two such connections): several processes opening a new store together meet
    /// this. Only the first open of a store switches, so it retries briefly, for as long as the
    /// busy timeout allows.
    private func switchToWriteAheadLog(_ writer: SQLiteConnection) throws(SQLiteFailure) {
        let deadline = ContinuousClock.now + .milliseconds(Int(busyTimeoutMilliseconds))
        // Reading the mode takes no lock; setting it answers the mode in force afterwards (the old
        // one when it could not switch) or fails with SQLITE_BUSY.
        func mode(_ pragma: String) throws(SQLiteFailure) -> String {
            try writer.withStatement(pragma) { statement throws(SQLiteFailure) in
                try statement.step() ? String(decoding: try statement.blob(at: 0), as: UTF8.self).lowercased() : ""
            }
        }
        while true {
            do {
                if try mode("PRAGMA journal_mode") == "wal" { return }
                if try mode("PRAGMA journal_mode = WAL") == "wal" { return }
            } catch  where error.primaryCode == SQLITE_BUSY {
                // Another connection holds a shared lock: try again below.
            }
            guard ContinuousClock.now < deadline else {
                throw SQLiteFailure(
                    code: SQLITE_BUSY, message: "another process kept the store locked while it was set up")
            }
            usleep(2_000)
        }
    }

    /// A TierCache store of a schema version this code does not read.
    private struct IncompatibleVersion: Error {
        let version: Int64
    }

    /// Makes the schema in an empty database, or checks that the database is a store of this
    /// version; sets WAL mode and the checkpoint size.
    func prepare(_ writer: SQLiteConnection) throws {
        // Reading the header first: a file that is not a database fails here, before any write.
        // One statement, so one read of the file: read apart, a store another process made between
        // the reads (a fleet of workers started on an empty directory) showed the application id
        // of before (0) and the tables of after, another program's database.
        let (applicationID, version, tables) = try writer.withStatement(
            """
            SELECT (SELECT * FROM pragma_application_id), (SELECT * FROM pragma_user_version),
                (SELECT count(*) FROM sqlite_schema)
            """
        ) { statement throws(SQLiteFailure) in
            try statement.step()
                ? (statement.integer(at: 0), statement.integer(at: 1), statement.integer(at: 2)) : (0, 0, 0)
        }
        if applicationID == 0 && tables == 0 {
            try createSchema(writer)
        } else if applicationID != Self.applicationID {
            throw TierCacheError(
                .foreignStore,
                "\(file.path) is another program's SQLite database (application id \(applicationID)); it was left as it is"
            )
        } else if version != Self.schemaVersion {
            throw IncompatibleVersion(version: version)
        } else {
            // A table a damaged schema lost is damage too.
            let ours =
                try writer.integer(
                    "SELECT count(*) FROM sqlite_schema WHERE name IN ('entries', 'entries_by_tick', 'state')") ?? 0
            guard ours == 3, try writer.integer("SELECT count(*) FROM state") == 1 else {
                throw SQLiteFailure(code: SQLITE_CORRUPT, message: "the store's tables are incomplete")
            }
            // Every statement the tier runs compiles against the stored schema: a damaged column
            // name in it is found now, not as an error at every operation.
            for query in Query.allCases {
                do {
                    try writer.prepare(query)
                } catch {
                    guard error.primaryCode == SQLITE_ERROR else { throw error }
                    throw SQLiteFailure(
                        code: SQLITE_CORRUPT, message: "the store's schema is damaged: \(error.message)")
                }
            }
        }
        try switchToWriteAheadLog(writer)
        // A checkpoint every 4 MiB of log (SQLite's default), or every capacity / 16 in a small
        // store, but not more often than every 64 pages (256 KiB).
        let checkpointPages = max(64, min(1_024, capacity / 16 / 4096))
        try writer.execute(
            """
            PRAGMA wal_autocheckpoint = \(checkpointPages);
            PRAGMA journal_size_limit = \(checkpointPages * 4096);
            """)
    }

    /// The schema, version 1 (made in one transaction, so a process opening the store at the same
    /// moment sees all of it or none, and its own attempt changes nothing):
    /// - `entries`: a record (the shared `EntryRecord` format, zlib payloads) by key, with its
    ///   accounted bytes and its recency tick; `entries_by_tick` finds the least recently used;
    /// - `state`: one row, the accounted bytes in use, the number of entries and the last tick.
    ///
    /// Pages are 4 KiB (set before the first table, so whatever the build's default), as the
    /// tier's accounting assumes.
    private func createSchema(_ writer: SQLiteConnection) throws(SQLiteFailure) {
        try writer.execute(
            """
            PRAGMA page_size = 4096;
            PRAGMA auto_vacuum = INCREMENTAL;
            BEGIN IMMEDIATE;
            PRAGMA application_id = \(Self.applicationID);
            PRAGMA user_version = \(Self.schemaVersion);
            CREATE TABLE IF NOT EXISTS entries(
                id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, record BLOB NOT NULL,
                cost INTEGER NOT NULL, tick INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS entries_by_tick ON entries(tick);
            CREATE TABLE IF NOT EXISTS state(
                id INTEGER PRIMARY KEY CHECK (id = 0), used INTEGER NOT NULL, entries INTEGER NOT NULL,
                clock INTEGER NOT NULL);
            INSERT OR IGNORE INTO state VALUES (0, 0, 0, 0);
            COMMIT;
            """)
    }
}

/// Creates an empty file at `path` readable and writable by its owner alone, unless something is
/// there already (an empty file is a new database to SQLite). Failures are SQLite's to report
/// when it opens the path.
private func createOwnerOnlyFile(_ path: String) {
    let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
    if descriptor >= 0 { close(descriptor) }
}
