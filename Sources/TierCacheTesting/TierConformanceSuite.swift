import Foundation
import TierCache

/// The checks every `CacheTier` must pass: run them against your own tier to prove it keeps
/// the contract `TieredCache` relies on.
///
/// The suite works with any test framework: each check throws ``Failure`` when the tier breaks
/// the contract. With Swift Testing, one parameterised test covers them all:
///
/// ```swift
/// @Test(arguments: TierConformanceSuite.Check.allCases)
/// func conformance(_ check: TierConformanceSuite.Check) async throws {
///     let suite = TierConformanceSuite(isPersistent: false) { _ in try MyTier(capacity: 1 << 20) }
///     try await suite.run(check)
/// }
/// ```
///
/// `makeTier` receives a fresh, empty directory for each check, and must return an empty tier.
/// A persistent tier keeps its data there: the ``Check/persistence`` check releases the tier and
/// calls `makeTier` again with the same directory, expecting the entries back. Capacities of
/// 1 MiB to 64 MiB keep the suite quick.
///
/// A tier that reads the time from a `CacheClock` should be made with the clock the suite gives
/// (``init(isPersistent:makeTierWithClock:)``): the ``Check/expiry`` check then moves it past an
/// entry's expiry and expects a miss, which it cannot check without it.
public struct TierConformanceSuite: Sendable {
    /// One property of the contract.
    public enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A stored entry comes back with the same bytes and metadata; an absent key is a miss.
        case roundTrip
        /// An empty value is a value, not a miss.
        case emptyValue
        /// Storing again under a key replaces the entry, and its bytes: removing the key then
        /// leaves the tier accounting nothing.
        case overwrite
        /// Removing a key makes it a miss; removing an absent key is not an error.
        case remove
        /// Removing all empties the tier, which then stores, reads and accounts as a new one.
        case removeAll
        /// An entry whose expiry hint has passed is never returned: one stored already expired is
        /// refused, and one whose expiry passes after it is stored is a miss from then on. That
        /// second rule needs the suite's clock (``init(isPersistent:makeTierWithClock:)``): made
        /// without one, the check cannot move time and tests the first rule only.
        case expiry
        /// The longest keys work, and keys sharing a long prefix stay distinct.
        case longKeys
        /// An entry over the per-entry limit is refused as too large, and the entry stored before
        /// under its key is gone (a refused store leaves nothing older readable). The limit is
        /// exact: learning what the tier adds to a value from its refusal, an entry stored at
        /// exactly the limit is kept and one a byte over is refused. A limit past
        /// ``TierConformanceSuite/largestExercisedBytes``, or past the capacity, fails the check,
        /// saying so.
        case entrySizeRule
        /// Writing several times the capacity never takes usage past capacity, and the values the
        /// tier still serves afterwards fit in it. A capacity past
        /// ``TierConformanceSuite/largestExercisedBytes`` fails the check, saying so.
        case capacity
        /// Many tasks storing, reading and removing at once never see another key's value, nor a
        /// value mixed from two writers' or with another stored date; afterwards, with every key
        /// removed, the tier accounts no entries and no bytes.
        case concurrentUse
        /// Writers overflowing the capacity three times over, beside readers and a remover, never
        /// take usage past capacity, never make a read return a value not stored under its key,
        /// and leave the tier serving no more than its capacity; the evictions are counted, and
        /// with every key removed the tier accounts no entries and no bytes.
        case concurrentEviction
        /// Hits, misses, stores and refusals of expired entries are counted in the tier's
        /// statistics: each counter moves, by no more than the operations that happened (a tier
        /// may count approximately, never more).
        case statistics
        /// A persistent tier keeps its entries when released and opened again, and its removals
        /// and replacements: a removed key stays a miss, a replaced one reads its new value.
        case persistence

        /// The check's name.
        public var description: String { rawValue }
    }

    /// A broken rule of the contract.
    public struct Failure: Error, CustomStringConvertible {
        /// The check that failed.
        public let check: Check
        /// What the tier did against the rule.
        public let message: String
        /// The check and the message.
        public var description: String { "\(check): \(message)" }
    }

    /// The largest capacity and entry limit the suite exercises, 1 GiB: the capacity check writes
    /// four times the capacity, the entry-size check one entry over the limit.
    public static let largestExercisedBytes = 1 << 30

    private let makeTier: @Sendable (URL, CacheClock) async throws -> any CacheTier
    private let isPersistent: Bool
    /// Whether the tiers read the time from the clock the suite gives them.
    private let usesClock: Bool

    /// Creates the suite for tiers made by `makeTier`, which read the time from the system.
    ///
    /// - Parameters:
    ///   - isPersistent: whether the tier keeps its entries in the directory across instances.
    ///   - makeTier: makes an empty tier; a persistent tier stores in the directory given.
    public init(isPersistent: Bool, makeTier: @escaping @Sendable (_ directory: URL) async throws -> any CacheTier) {
        self.isPersistent = isPersistent
        self.makeTier = { directory, _ in try await makeTier(directory) }
        usesClock = false
    }

    /// Creates the suite for tiers made by `makeTierWithClock`, which read the time from the
    /// clock given: the suite moves it to let an entry's expiry pass (``Check/expiry``).
    ///
    /// - Parameters:
    ///   - isPersistent: whether the tier keeps its entries in the directory across instances.
    ///   - makeTierWithClock: makes an empty tier that reads the time from the clock given; a
    ///     persistent tier stores in the directory given.
    public init(
        isPersistent: Bool,
        makeTierWithClock: @escaping @Sendable (_ directory: URL, _ clock: CacheClock) async throws -> any CacheTier
    ) {
        self.isPersistent = isPersistent
        makeTier = makeTierWithClock
        usesClock = true
    }

    /// Runs every check, in order, stopping at the first failure.
    public func runAll() async throws {
        for check in Check.allCases { try await run(check) }
    }

    /// Runs one check in a directory of its own, removed afterwards.
    public func run(_ check: Check) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tiercache-conformance-\(UUID().uuidString)", isDirectory: true)
        // Made here, as the documentation promises (a tier may open a file in it without making it).
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualCacheClock(start: Date())
        let context = Context(
            check: check, directory: directory, clock: usesClock ? clock : nil,
            makeTier: { [makeTier] directory in try await makeTier(directory, clock.cacheClock) })
        switch check {
        case .roundTrip: try await context.roundTrip()
        case .emptyValue: try await context.emptyValue()
        case .overwrite: try await context.overwrite()
        case .remove: try await context.remove()
        case .removeAll: try await context.removeAll()
        case .expiry: try await context.expiry()
        case .longKeys: try await context.longKeys()
        case .entrySizeRule: try await context.entrySizeRule()
        case .capacity: try await context.capacity()
        case .concurrentUse: try await context.concurrentUse()
        case .concurrentEviction: try await context.concurrentEviction()
        case .statistics: try await context.statistics()
        case .persistence: if isPersistent { try await context.persistence() }
        }
    }
}
