import Foundation
import TierCache
import TierCacheEviction
import TierCacheLMDB
import TierCacheSQLite

extension BenchmarkSubject {
    /// A memory tier of `capacity` bytes evicting by one of its built-in policies, named
    /// `memory-<policy>` (`memory-lru`, `memory-s3fifo`, …).
    public static func memory(capacity: Int, policy: MemoryTier.EvictionPolicy = .lru) -> BenchmarkSubject {
        .localTier("memory-\(policy.rawValue.lowercased())", baseline: .minimalLRU) { _ in
            try MemoryTier(capacity: capacity, policy: policy)
        }
    }

    /// A memory tier of `capacity` bytes evicting by a policy type of your own, named
    /// `memory-<the policy's name>` (`memory-lfu` for a type named `"LFU"`).
    public static func memory<Policy: EvictionPolicy>(capacity: Int, policyType: Policy.Type) -> BenchmarkSubject {
        .localTier("memory-\(Policy.name.lowercased())", baseline: .minimalLRU) { _ in
            try MemoryTier(capacity: capacity, policyType: policyType)
        }
    }

    /// What an LMDB subject does to values before they reach the disk.
    public enum AtRest: Sendable {
        /// zstd, one value at a time (the tier's default).
        case plain
        /// zstd with dictionaries the tier trains on the small values it stores.
        case trainedDictionary
        /// zstd, then sealed by `sealing` (e.g. `TierCacheEncryption`'s `EncryptionAtRest`).
        case encrypted(any RecordSealing)

        /// The suffix of the subject's name.
        var suffix: String {
            switch self {
            case .plain: ""
            case .trainedDictionary: "-dictionary"
            case .encrypted: "-encrypted"
            }
        }
    }

    /// An LMDB tier of `capacity` bytes in the run's scratch directory, named `lmdb`,
    /// `lmdb-dictionary` or `lmdb-encrypted`. Durability defaults to `.none` (no sync at commit):
    /// the benchmark measures the tier, not the disk's flush latency; pass the tier's default,
    /// `.metadataAsync`, to measure what an app configured so would see.
    public static func lmdb(
        capacity: Int, atRest: AtRest = .plain, durability: LMDBTier.Durability = .none
    ) -> BenchmarkSubject {
        .localTier("lmdb" + atRest.suffix, baseline: .rawLMDBZstd) { scratch in
            try LMDBTier(directory: scratch.directory, configuration: lmdbConfiguration(capacity, atRest, durability))
        }
    }

    /// A SQLite tier of `capacity` bytes in the run's scratch directory, named `sqlite` (or
    /// `sqlite-full` with `SQLiteTier.Durability.full`), compared with raw SQLite and zlib at the
    /// same durability.
    public static func sqlite(capacity: Int, durability: SQLiteTier.Durability = .normal) -> BenchmarkSubject {
        .localTier(durability == .full ? "sqlite-full" : "sqlite", baseline: .rawSQLiteZlib(durability)) { scratch in
            try SQLiteTier(
                directory: scratch.directory, configuration: .init(capacity: capacity, durability: durability))
        }
    }

    /// A memory tier over an LMDB tier, read through as an application's `TieredCache`: named
    /// `memory+lmdb`.
    public static func memoryOverLMDB(
        memory: Int, disk: Int, policy: MemoryTier.EvictionPolicy = .lru, durability: LMDBTier.Durability = .none
    ) -> BenchmarkSubject {
        .tiered("memory+lmdb", baseline: .rawLMDBZstd) { scratch in
            TieredCache(tiers: [
                try MemoryTier(capacity: memory, policy: policy),
                try LMDBTier(
                    directory: scratch.directory, configuration: lmdbConfiguration(disk, .plain, durability)),
            ])
        }
    }

    private static func lmdbConfiguration(
        _ capacity: Int, _ atRest: AtRest, _ durability: LMDBTier.Durability
    ) -> LMDBTier.Configuration {
        var configuration = LMDBTier.Configuration(capacity: capacity, durability: durability)
        switch atRest {
        case .plain: break
        case .trainedDictionary: configuration.dictionary = .automatic()
        case .encrypted(let sealing): configuration.encryption = sealing
        }
        return configuration
    }

    /// The baseline of memory tiers: the least an LRU needs (a dictionary and an index-linked
    /// list) behind one lock, with no statistics or expiry. It charges each entry what
    /// `MemoryTier` charges (value, key and `MemoryTier.perEntryOverhead`) and refuses one above
    /// `maxEntryBytes` (by default 5% of its capacity, `MemoryTier`'s default), so at one capacity
    /// both hold the same entries. The benchmark runner gives it the limit the subject's tier
    /// reports (`TierUsage.maxEntryBytes`).
    /// Named with its capacity (`minimal LRU 16 MiB`): subjects of different capacities in one run
    /// each get their own.
    public static func minimalLRU(capacity: Int, maxEntryBytes: Int? = nil) -> BenchmarkSubject {
        BenchmarkSubject(name: "minimal LRU \(ByteCount.format(capacity))", baseline: .none, isBaseline: true) { _ in
            .localTier(MinimalLRUTier(capacity: capacity, maxEntryCost: maxEntryBytes))
        }
    }

    /// The SQLite tier's baseline: SQLite and zlib called directly, with the tier's settings and
    /// nothing of its own (one `SELECT` and one `uncompress` per lookup, one `INSERT` in its own
    /// transaction per store). It refuses a compressed record above `maxEntryBytes` (by default
    /// 5% of its capacity, the tiers' default rule; the benchmark runner gives it the subject
    /// tier's `TierUsage.maxEntryBytes`) and evicts nothing: a store that finds its file grown
    /// past the capacity throws, saying so (from there on the two would not do the same work).
    /// Named with its capacity (`raw SQLite+zlib 256 MiB`, and `full sync` with
    /// `SQLiteTier.Durability.full`).
    public static func rawSQLiteZlib(
        capacity: Int, maxEntryBytes: Int? = nil, durability: SQLiteTier.Durability = .normal
    ) -> BenchmarkSubject {
        let name = "raw SQLite+zlib \(ByteCount.format(capacity))" + (durability == .full ? " full sync" : "")
        return BenchmarkSubject(name: name, baseline: .none, isBaseline: true) { scratch in
            .localTier(
                try RawSQLiteZlibTier(
                    directory: scratch.directory, capacity: capacity, maxEntryBytes: maxEntryBytes,
                    durability: durability))
        }
    }

    /// The baseline of disk tiers: LMDB and zstd called directly, with `LMDBTier`'s flags and
    /// level and nothing of its own (no accounting, recency, framing or checksum). It refuses a
    /// compressed record above `maxEntryBytes` (by default 5% of its capacity; the runner gives it
    /// the subject tier's limit) and evicts nothing: a store that finds its map full throws,
    /// saying so. Named with its capacity (`raw LMDB+zstd 256 MiB`).
    public static func rawLMDBZstd(capacity: Int, maxEntryBytes: Int? = nil) -> BenchmarkSubject {
        BenchmarkSubject(name: "raw LMDB+zstd \(ByteCount.format(capacity))", baseline: .none, isBaseline: true) {
            scratch in
            .localTier(
                try RawLMDBZstdTier(directory: scratch.directory, capacity: capacity, maxEntryBytes: maxEntryBytes))
        }
    }
}
