import CoreMetrics
import Foundation
import Logging
import TierCache

extension SQLiteTier {
    /// What a committed store survives.
    public enum Durability: Sendable, Hashable {
        /// Every commit is synced to the device before `store` returns (`synchronous=FULL`): a
        /// power loss keeps every committed entry. Each store costs an `fsync`.
        case full
        /// Commits are handed to the operating system and synced at checkpoints
        /// (`synchronous=NORMAL` in WAL mode): a killed process keeps every committed entry; a power
        /// loss may lose the last commits, never the database's consistency. The default, as for a
        /// cache whose entries can be fetched again.
        case normal
    }

    /// What opening does with a store that is damaged or was written by an incompatible version.
    public enum RecoveryPolicy: Sendable, Hashable {
        /// Empty the store and start afresh, counted in `TierStatistics.storeResets` (a cache can
        /// always be refilled). The default.
        case resetDamagedStore
        /// Throw `TierCacheError` with `TierCacheError.Code.damagedStore` or
        /// `TierCacheError.Code.incompatibleVersion`, leaving the file as it is.
        case throwError
    }

    /// The tier's settings.
    public struct Configuration: Sendable {
        /// The bytes the tier's entries may take, accounted as SQLite lays them out (records, keys
        /// and the index rows that find them); at least ``SQLiteTier/minimumCapacity``.
        public var capacity: Int
        /// The largest entry, as a fraction of capacity (URLCache's 5% by default, at most 0.5); a
        /// larger one is refused with `RefusalReason.tooLarge(size:limit:)`.
        public var maxEntryFraction: Double
        /// zlib's level for values, 1 (fastest, the default) to 9.
        public var compressionLevel: Int32
        /// What a committed store survives (``Durability/normal`` by default).
        public var durability: Durability
        /// What opening does with a damaged or incompatible store.
        public var recovery: RecoveryPolicy
        /// How long an operation waits for a lock another connection holds (a write for another
        /// process's write, the first open of a new store for the switch to WAL) before failing.
        public var busyTimeout: Duration
        /// The tier's name in statistics, logs and metrics.
        public var name: String
        /// Where expiry hints are checked against.
        public var clock: CacheClock
        /// Called when a damaged store is emptied (at open or when damage is met later), with the
        /// database file and the reason.
        public var onStoreReset: (@Sendable (_ file: URL, _ reason: String) -> Void)?
        /// Where refusals, damage and resets are logged.
        public var logger: Logger?
        /// Where the tier's counters and gauges go (`MetricsSystem`'s factory when `nil`).
        public var metricsFactory: (any MetricsFactory)?

        /// Settings with the given capacity in bytes; the rest have defaults.
        public init(
            capacity: Int,
            maxEntryFraction: Double = EntrySizeLimit.urlCacheDefaultFraction,
            compressionLevel: Int32 = 1,
            durability: Durability = .normal,
            recovery: RecoveryPolicy = .resetDamagedStore,
            busyTimeout: Duration = .seconds(5),
            name: String = "sqlite",
            clock: CacheClock = .system,
            onStoreReset: (@Sendable (_ file: URL, _ reason: String) -> Void)? = nil,
            logger: Logger? = nil,
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.capacity = capacity
            self.maxEntryFraction = maxEntryFraction
            self.compressionLevel = compressionLevel
            self.durability = durability
            self.recovery = recovery
            self.busyTimeout = busyTimeout
            self.name = name
            self.clock = clock
            self.onStoreReset = onStoreReset
            self.logger = logger
            self.metricsFactory = metricsFactory
        }
    }
}
