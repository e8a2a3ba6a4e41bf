import CoreMetrics
import Foundation
import Logging
import TierCache

extension LMDBTier {
    /// How hard the tier works to keep committed entries across a power loss.
    ///
    /// Every mode keeps every committed entry when the *process* dies (even by `SIGKILL`): LMDB
    /// hands each commit to the operating system before the call returns. The modes differ only
    /// when the *machine* loses power or the kernel crashes.
    public enum Durability: Sendable, Hashable {
        /// `fsync` data and metadata on every commit: a power loss costs nothing. Slowest.
        case full
        /// `fsync` data on every commit but not LMDB's metadata page (`MDB_NOMETASYNC`): a power
        /// loss may undo the last commit(s), never the store's integrity. The default.
        case metadataAsync
        /// No `fsync` (`MDB_NOSYNC`): the operating system writes back when it likes. A power loss
        /// may lose recent commits and may damage the store, which then opens under
        /// ``RecoveryPolicy``. Fastest; for caches that are cheap to refill.
        case none
    }

    /// What opening does with a store whose files are damaged (the check at open finds damage,
    /// LMDB refuses the file, or a previous process died while checking it) or were written by
    /// an incompatible format version.
    public enum RecoveryPolicy: Sendable, Hashable {
        /// Delete `data.mdb` and `lock.mdb` and start empty (it is a cache). The default.
        /// ``LMDBTier/didResetDamagedStore`` tells that it happened.
        case resetDamagedStore
        /// Throw `TierCacheError.Code.damagedStore` or `TierCacheError.Code.incompatibleVersion`.
        case throwError
    }

    /// Whether small values are compressed with a zstd dictionary (see ``LMDBTier``'s
    /// "Dictionaries").
    public enum DictionaryCompression: Sendable, Hashable {
        /// No dictionary: every value is compressed on its own. The default.
        case off
        /// The tier trains a dictionary on the small values it stores once it has seen enough
        /// of them, and trains a new one when the compression ratio drifts below what the
        /// current one achieved on its samples.
        case automatic(DictionaryTraining = DictionaryTraining())
        /// The app's own dictionary (trained offline, e.g. with `zstd --train`), used for values
        /// of at most `maximumValueSize` bytes. Any bytes work as raw content. A store keeps the
        /// four dictionaries provided last (records made with an older one become
        /// `TierStatistics.dictionaryMisses`).
        case provided([UInt8], maximumValueSize: Int = DictionaryTraining.defaultMaximumValueSize)
    }

    /// When and how a tier trains its dictionaries.
    public struct DictionaryTraining: Sendable, Hashable {
        /// 8 KiB: above it, values compress well enough alone.
        public static let defaultMaximumValueSize = 8 << 10
        /// Values of at most this many bytes are sampled and compressed with the dictionary; 8 KiB by default.
        public var maximumValueSize: Int
        /// The dictionary's size; 16 KiB by default (at most 1/64 of the capacity is used).
        public var dictionarySize: Int
        /// The sample bytes to train on, gathered from the values stored (the most recent ones
        /// are kept); 1 MiB by default (64 times the default dictionary; zstd suggests about 100
        /// times, and fails with far fewer). At least 8 times ``dictionarySize``.
        public var sampleBytes: Int
        /// A new dictionary is trained when the ratio of the values compressed with the current
        /// one (over at least ``sampleBytes`` of them) falls below this share of the ratio it
        /// achieved on its own samples; 0.8 by default.
        public var retrainBelow: Double
        /// The most dictionaries kept; 4 by default. Training one more deletes the oldest, and
        /// records compressed with it become misses (`TierStatistics.dictionaryMisses`).
        public var maximumDictionaries: Int

        /// Training settings; the defaults suit responses of a few hundred bytes to a few KiB.
        public init(
            maximumValueSize: Int = DictionaryTraining.defaultMaximumValueSize,
            dictionarySize: Int = 16 << 10,
            sampleBytes: Int = 1 << 20,
            retrainBelow: Double = 0.8,
            maximumDictionaries: Int = 4
        ) {
            self.maximumValueSize = maximumValueSize
            self.dictionarySize = dictionarySize
            self.sampleBytes = sampleBytes
            self.retrainBelow = retrainBelow
            self.maximumDictionaries = maximumDictionaries
        }
    }

    /// The disk tier's settings.
    public struct Configuration: Sendable {
        /// The most bytes the store's data file may reach. At least ``LMDBTier/minimumCapacity``.
        /// Fixed when the store is created: reopening with another capacity throws.
        public var capacity: Int
        /// The largest stored entry (after compression and framing), as a fraction of
        /// ``capacity``; 0.05 by default, URLCache's documented rule, and at most 0.5. Never above
        /// 4 GiB − 1, the most a record's 32-bit size field (and LMDB) counts.
        public var maxEntryFraction: Double
        /// zstd's level: 1 (fast) by default; see `ZstdCodec`.
        public var compressionLevel: Int32
        /// Small values compressed with a zstd dictionary: ``DictionaryCompression/off`` by default.
        public var dictionary: DictionaryCompression
        /// Encryption at rest (`EncryptionAtRest` from `TierCacheEncryption`, or a sealer of your
        /// own); `nil`, the default, stores records in the clear. A plain store opened with
        /// encryption turns to it: its plain records are misses, replaced as entries are stored
        /// again. A store once opened with encryption does not open without it (the tier throws
        /// `TierCacheError.Code.invalidConfiguration` rather than store in the clear there).
        public var encryption: (any RecordSealing)?
        /// Sync behaviour; ``Durability/metadataAsync`` by default.
        public var durability: Durability
        /// What to do with a damaged store; ``RecoveryPolicy/resetDamagedStore`` by default.
        public var recovery: RecoveryPolicy
        /// Most concurrent reads across all processes (LMDB's reader table); 126 by default.
        ///
        /// The first process to open the store while no other has it open sizes the table; later
        /// ones share it. Slots of processes that died mid-read are taken back when the table is
        /// full; a read that finds every slot held by live reads fails with
        /// `TierCacheError.Code.storageFailure` naming this setting.
        public var maxReaders: Int
        /// The name in statistics.
        public var name: String
        /// The source of "now" for expiry hints.
        public var clock: CacheClock
        /// Called (on the opening thread, before the initializer returns) when opening deletes and
        /// recreates a damaged store, with the directory and the reason: the place to log it.
        /// The reset is also counted in `TierStatistics.storeResets`.
        public var onStoreReset: (@Sendable (_ directory: URL, _ reason: String) -> Void)?
        /// Where the tier logs what a production operator should hear of: a damaged store reset
        /// (`error`), damaged entries removed and a full disk (`warning`), refusals of entries
        /// over the size limit (`debug`). `nil`, the default, logs nothing.
        public var logger: Logger?
        /// Where the tier records its metrics (`MetricLabels`); `nil`, the default, means the
        /// factory the process bootstrapped when the tier is opened (none: nothing recorded).
        public var metricsFactory: (any MetricsFactory)?

        /// A configuration; only the capacity (in bytes) is required.
        public init(
            capacity: Int,
            maxEntryFraction: Double = EntrySizeLimit.urlCacheDefaultFraction,
            compressionLevel: Int32 = 1,
            dictionary: DictionaryCompression = .off,
            encryption: (any RecordSealing)? = nil,
            durability: Durability = .metadataAsync,
            recovery: RecoveryPolicy = .resetDamagedStore,
            maxReaders: Int = 126,
            name: String = "lmdb",
            clock: CacheClock = .system,
            onStoreReset: (@Sendable (_ directory: URL, _ reason: String) -> Void)? = nil,
            logger: Logger? = nil,
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.capacity = capacity
            self.maxEntryFraction = maxEntryFraction
            self.compressionLevel = compressionLevel
            self.dictionary = dictionary
            self.encryption = encryption
            self.durability = durability
            self.recovery = recovery
            self.maxReaders = maxReaders
            self.name = name
            self.clock = clock
            self.onStoreReset = onStoreReset
            self.logger = logger
            self.metricsFactory = metricsFactory
        }
    }
}
