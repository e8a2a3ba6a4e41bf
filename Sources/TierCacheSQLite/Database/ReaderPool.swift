@_spi(TierCacheInternals) import TierCache

/// Reader connections, checked out for one lookup at a time.
///
/// In WAL mode readers never wait for the writer or for each other, but a connection serves one
/// thread at a time: lookups running at once each take a connection of their own, opened on first
/// need; at most ``idleLimit`` are kept between uses.
final class ReaderPool: Sendable {
    private let idle = Locked<[SQLiteConnection]>([])
    private let open: @Sendable () throws(SQLiteFailure) -> SQLiteConnection
    let idleLimit: Int

    init(idleLimit: Int, open: @escaping @Sendable () throws(SQLiteFailure) -> SQLiteConnection) {
        self.idleLimit = idleLimit
        self.open = open
    }

    /// Runs `body` with a reader connection. A connection whose use failed is closed, not pooled:
    /// it may be left mid-transaction or pointing at a store being reset.
    func withReader<T>(_ body: (SQLiteConnection) throws(SQLiteFailure) -> T) throws(SQLiteFailure) -> T {
        let connection: SQLiteConnection
        if let pooled = idle.withLock({ $0.popLast() }) {
            connection = pooled
        } else {
            connection = try open()
        }
        let result = try body(connection)
        idle.withLock { if $0.count < idleLimit { $0.append(connection) } }
        return result
    }

    /// Closes every idle connection (after the store was reset: fewer connections to a file that
    /// changed under them; SQLite would prepare their statements again anyway).
    func closeIdle() {
        // Taken out under the lock and released (closed) after it.
        _ = idle.withLock { pool -> [SQLiteConnection] in
            defer { pool.removeAll() }
            return pool
        }
    }
}
