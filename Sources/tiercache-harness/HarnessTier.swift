import ArgumentParser
import Foundation
import TierCache
import TierCacheLMDB
import TierCacheSQLite

/// The disk tier a harness command works on (`--tier lmdb` or `--tier sqlite`): the reliability
/// tests run both through the same commands.
enum HarnessTier: String, ExpressibleByArgument, CaseIterable, Sendable {
    case lmdb, sqlite

    /// A tier opened by a harness command, and why its store was reset at open, if it was.
    struct Opened {
        let tier: any LocalCacheTier
        let resetReason: String?
    }

    /// Opens the store in `directory` with default settings (fast, unsynced commits with
    /// `unsynced`); LMDB-only settings come from `lmdb`.
    func open(
        _ directory: String, capacity: Int, unsynced: Bool = false, lmdb: LMDBTier.Configuration? = nil
    ) throws -> Opened {
        let url = URL(fileURLWithPath: directory)
        switch self {
        case .lmdb:
            let tier = try LMDBTier(
                directory: url,
                configuration: lmdb ?? .init(capacity: capacity, durability: unsynced ? .none : .metadataAsync))
            return Opened(tier: tier, resetReason: tier.storeResetReason)
        case .sqlite:
            let tier = try SQLiteTier(directory: url, capacity: capacity)
            return Opened(tier: tier, resetReason: tier.storeResetReason)
        }
    }

    /// Makes everything committed durable in the store's main files (LMDB's `sync()`, SQLite's
    /// checkpoint), so that a copy of them holds every entry.
    static func sync(_ tier: any LocalCacheTier) throws {
        switch tier {
        case let lmdb as LMDBTier: try lmdb.sync()
        case let sqlite as SQLiteTier: try sqlite.sync()
        default: break
        }
    }
}
