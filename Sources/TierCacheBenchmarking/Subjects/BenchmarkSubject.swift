import Foundation
import Synchronization
import TierCache
import TierCacheSQLite

/// Something the benchmark measures: a tier (yours or one of the presets), a tiered cache, or a
/// baseline, made fresh by a factory for every run so that runs do not share state.
///
/// ```swift
/// let subjects: [BenchmarkSubject] = [
///     .localTier("dictionary") { _ in DictionaryTier(capacity: 64 << 20) },
///     .memory(capacity: 64 << 20, policy: .s3fifo),
///     .lmdb(capacity: 256 << 20),
/// ]
/// ```
///
/// The factory receives a ``BenchmarkScratch``: a directory of its own, deleted after the run,
/// whose size on disk the result reports.
public struct BenchmarkSubject: Sendable {
    /// The name in tables, charts and files (`memory-lru`, `lmdb`, …).
    public var name: String
    /// The baseline this subject's throughput is divided by, in the same run.
    public var baseline: Baseline
    /// Whether this subject is itself a baseline (reported, and divided by nothing).
    public var isBaseline: Bool
    let open: @Sendable (BenchmarkScratch) async throws -> SubjectDriver

    /// Which baseline a subject is compared with.
    public enum Baseline: Sendable, Hashable {
        /// Memory tiers with the minimal LRU, every other medium with raw LMDB + zstd.
        case automatic
        /// The minimal LRU (``BenchmarkSubject/minimalLRU(capacity:maxEntryBytes:)``).
        case minimalLRU
        /// LMDB and zstd called directly (``BenchmarkSubject/rawLMDBZstd(capacity:maxEntryBytes:)``).
        case rawLMDBZstd
        /// SQLite and zlib called directly, committing as `durability` says
        /// (``BenchmarkSubject/rawSQLiteZlib(capacity:maxEntryBytes:durability:)``).
        case rawSQLiteZlib(SQLiteTier.Durability)
        /// No ratio.
        case none
    }

    init(
        name: String, baseline: Baseline, isBaseline: Bool = false,
        open: @escaping @Sendable (BenchmarkScratch) async throws -> SubjectDriver
    ) {
        self.name = name
        self.baseline = baseline
        self.isBaseline = isBaseline
        self.open = open
    }

    /// Any tier, driven through its `async` interface (a remote tier, or one that only has that).
    public static func tier(
        _ name: String, baseline: Baseline = .automatic,
        _ make: @escaping @Sendable (BenchmarkScratch) async throws -> any CacheTier
    ) -> BenchmarkSubject {
        BenchmarkSubject(name: name, baseline: baseline) { scratch in .tier(try await make(scratch)) }
    }

    /// Any local tier, driven through its synchronous interface, as `TieredCache` drives it.
    public static func localTier(
        _ name: String, baseline: Baseline = .automatic,
        _ make: @escaping @Sendable (BenchmarkScratch) async throws -> any LocalCacheTier
    ) -> BenchmarkSubject {
        BenchmarkSubject(name: name, baseline: baseline) { scratch in .localTier(try await make(scratch)) }
    }

    /// A tiered cache: lookups through its local tiers first, as an application's.
    public static func tiered(
        _ name: String, baseline: Baseline = .automatic,
        _ make: @escaping @Sendable (BenchmarkScratch) async throws -> TieredCache
    ) -> BenchmarkSubject {
        BenchmarkSubject(name: name, baseline: baseline) { scratch in .tiered(try await make(scratch)) }
    }
}

/// A directory a subject may keep files in for one run; the runner deletes it afterwards and
/// reports the bytes it held. What a subject holds outside it (entries on a server, connections)
/// it gives back through ``onTeardown(_:)``.
public struct BenchmarkScratch: Sendable {
    /// The directory (created empty before the factory runs).
    public let directory: URL
    private let teardowns = Teardowns()

    init(directory: URL) {
        self.directory = directory
    }

    /// Runs `action` once the run is measured, before the directory is deleted: to remove what a
    /// subject stored on a shared server, or close what it opened. Actions run in the reverse
    /// order of their registration; one that throws is not retried.
    public func onTeardown(_ action: @escaping @Sendable () async throws -> Void) {
        teardowns.actions.withLock { $0.append(action) }
    }

    /// Runs the registered actions, last first, and forgets them.
    func tearDown() async {
        let actions = teardowns.actions.withLock { actions in
            defer { actions = [] }
            return actions
        }
        for action in actions.reversed() { try? await action() }
    }

    /// The actions, shared by the copies of one scratch (the factory's and the runner's).
    private final class Teardowns: Sendable {
        let actions = Mutex<[@Sendable () async throws -> Void]>([])
    }
}
