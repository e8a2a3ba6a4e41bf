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

    let file: URL
    let capacity: Int
    let durability: SQLiteTier.Durability
    let busyTimeoutMilliseconds: Int32

    /// The writer connection, and why the store was emptied at open, if it was.
    struct Opened {
        let writer: SQLiteConnection
        let resetReason: String?
    }

    /// A new connection with the store's settings.
    func connect() throws(SQLiteFailure) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: file.path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.execute(
            """
            PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            PRAGMA cell_size_check = ON;
            """)
        return connection
    }

    /// Opens the writer connection and makes or checks the schema.
    func open(recovery: SQLiteTier.RecoveryPolicy) throws(TierCacheError) -> Opened {
        let reason: String
        let code: TierCacheError.Code
        var writer: SQLiteConnection?
        do {
            let connection = try connect()
            writer = connection
            // Owner-only, like the directory: SQLite creates files with 0644, and gives the
            // write-ahead log and shared-memory files it makes later the database file's permissions.
            _ = chmod(file.path, 0o600)
            try prepare(connection)
            return Opened(writer: connection, resetReason: nil)
        } catch let failure as SQLiteFailure where failure.isDamage {
            (reason, code) = ("damaged: \(failure.message)", .damagedStore)
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
            if let writer, (try? writer.resetDatabase()) != nil {
                emptied = writer
            } else {
                // A file whose header is not a database's cannot be vacuumed: close it (ending the
                // write-ahead log too), truncate both files, and open the empty database SQLite then sees.
                writer = nil
                emptied = try recreate()
            }
            try prepare(emptied)
            return Opened(writer: emptied, resetReason: reason)
        } catch {
            throw TierCacheError(
                .damagedStore, "the SQLite store at \(file.path) is \(reason), and emptying it failed",
                underlying: "\(error)")
        }
    }

    /// An empty store in place of one whose file is not a database (with no connection to it left
    /// open here): both files truncated, and a connection to the empty database.
    private func recreate() throws(SQLiteFailure) -> SQLiteConnection {
        for path in [file.path, file.path + "-wal"] where truncate(path, 0) != 0 && errno != ENOENT {
            throw SQLiteFailure(code: SQLITE_IOERR, message: "cannot truncate \(path): errno \(errno)")
        }
        return try connect()
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
                try statement.step() ? String(decoding: statement.blob(at: 0), as: UTF8.self).lowercased() : ""
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
        let applicationID = try writer.integer("PRAGMA application_id") ?? 0
        let version = try writer.integer("PRAGMA user_version") ?? 0
        let tables = try writer.integer("SELECT count(*) FROM sqlite_schema") ?? 0
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
        }
        try switchToWriteAheadLog(writer)
        // A checkpoint every 4 MiB of log (SQLite's default), or every capacity / 16 in a small store.
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
    private func createSchema(_ writer: SQLiteConnection) throws(SQLiteFailure) {
        try writer.execute(
            """
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
