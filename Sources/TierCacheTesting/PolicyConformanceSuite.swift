import TierCache
import TierCacheEviction

/// The checks an eviction policy of your own must pass to run in a `MemoryTier` as it runs in
/// the simulator: the rules of `EvictionPolicy`'s contract that the tier relies on.
///
/// The simulator reads only whether each request hit, so a policy that breaks the contract can
/// replay traces with plausible hit ratios, and `tiercache tune` can recommend it; in a
/// `MemoryTier`, which keeps values by what the policy reports, the same policy stops the
/// process (a precondition names the rule) rather than keep values past its capacity or give
/// one key another's history. This suite finds that in a test instead:
///
/// ```swift
/// @Test(arguments: PolicyConformanceSuite<MyPolicy>.Check.allCases)
/// func conformance(_ check: PolicyConformanceSuite<MyPolicy>.Check) throws {
///     try PolicyConformanceSuite(MyPolicy.self).run(check)
/// }
/// ```
///
/// Each check drives the policy the way the tier does, in object mode and in byte mode: requests
/// over a skewed set of slots, objects of changing sizes (removed first, as the tier removes a
/// slot before storing a new size), objects too large to admit, removals, and slots given to a
/// new object once the policy forgets them. After every call it compares what the policy
/// reported (`departures`) with what `isResident(_:)` and `remembers(_:)` answer for every slot.
public struct PolicyConformanceSuite<Policy: EvictionPolicy>: Sendable {
    /// One rule of the contract.
    public enum Check: String, CaseIterable, Sendable, CustomStringConvertible {
        /// The policy reads no future (`needsFuture` is false): the tier refuses offline policies.
        case online
        /// A request hits exactly when its slot is resident, and a hit evicts nothing.
        case hitsAreResidents
        /// The resident objects' sizes never sum past the capacity.
        case staysWithinCapacity
        /// An object larger than `largestAdmissibleSize` is never resident.
        case refusesOversizedObjects
        /// Every slot that leaves the cache or the policy's memory is in `departures` after the
        /// call that made it leave, and a resident slot is remembered.
        case reportsDepartures
        /// `remove(_:)` forgets the slot, resident or remembered, and `removeAll()` every slot.
        case removeForgets
        /// `residentsByRetention` lists each resident slot once, and nothing else.
        case listsResidents
        /// `prefetch(_:keyHash:)` changes nothing the policy decides: a replay with hints of
        /// slots about to be requested hits and keeps exactly what the same replay without them
        /// does (the simulator hints, the memory tier does not: a policy whose hints count as
        /// requests is simulated as a policy the tier does not run).
        case prefetchChangesNothing
        /// The policy decides in the tier as in the simulator: the same requests hit with slots
        /// reused as the tier reuses them, departures read, and with one slot per object, as the
        /// simulator numbers them, the number of objects given ahead and departures unread
        /// (per-slot state is set on admission, not left from the slot's last object; nothing the
        /// policy decides depends on a slot's number, nor on whether its departures are read).
        case reusedSlotsStartFresh
        /// What the policy remembers of objects no longer resident stays bounded on a stream of
        /// mostly new objects: it levels off (or stays within four times the most the policy
        /// held at once). A `MemoryTier` keeps each remembered object's key.
        case boundedHistory
        /// A policy that reads requests' key hashes declares `usesKeyHash`: one that does not
        /// must decide alike whatever the hashes, as `MemoryTier` and the simulator then give it 0.
        case declaresKeyHash

        /// The check's name.
        public var description: String { rawValue }
    }

    /// A broken rule of the contract.
    public struct Failure: Error, CustomStringConvertible {
        /// The check that failed.
        public let check: Check
        /// What the policy did against the rule, and where in the replay.
        public let message: String
        /// The check and the message.
        public var description: String { "\(check): \(message)" }
    }

    /// Requests each workload replays.
    let requests: Int

    /// The suite for `policy`. `requests` is how many requests each of the two workloads (object
    /// mode, byte mode) replays; the default keeps a check under a second in a debug build.
    public init(_ policy: Policy.Type = Policy.self, requests: Int = 4_000) {
        self.requests = max(1, requests)
    }

    /// Runs every check, in order, stopping at the first failure.
    public func runAll() throws {
        for check in Check.allCases { try run(check) }
    }

    /// Runs one check.
    public func run(_ check: Check) throws {
        if check == .online {
            guard !Policy.needsFuture else {
                throw Failure(
                    check: check,
                    message: "\(Policy.name) reads the future (needsFuture): it runs in the simulator only")
            }
            return
        }
        for workload in PolicyWorkload.all {
            switch check {
            case .reusedSlotsStartFresh:
                var comparison = SlotReuseComparison<Policy>(workload: workload, requests: requests)
                try comparison.replay()
                continue
            case .boundedHistory:
                var bound = HistoryBound<Policy>(workload: workload)
                try bound.replay(requests: requests)
                continue
            case .declaresKeyHash:
                var declaration = KeyHashDeclaration<Policy>(workload: workload)
                try declaration.replay(requests: requests)
                continue
            default:
                break
            }
            var driver = PolicyDriver<Policy>(check: check, workload: workload)
            try driver.replay(requests: requests)
        }
    }
}

/// One way of driving a policy: its capacity and the sizes of its objects.
struct PolicyWorkload: Sendable {
    let name: String
    let capacity: UInt64
    /// How many slots the requests spread over (a tenth of them take most requests).
    let slots: UInt32
    /// The largest ordinary size (1 in object mode).
    let largestSize: UInt64

    static let all = [
        PolicyWorkload(name: "object mode", capacity: 50, slots: 200, largestSize: 1),
        PolicyWorkload(name: "byte mode", capacity: 4_000, slots: 200, largestSize: 300),
    ]

    /// A slot number below `slots`: nine requests in ten go to a tenth of them.
    func pickSlot(_ random: inout SplitMix64) -> UInt32 {
        let hot = max(1, slots / 10)
        let spread = random.next() % 10 == 0 ? slots : hot
        return UInt32(random.next() % UInt64(spread))
    }

    /// An ordinary object size, 1 through `largestSize`.
    func drawSize(_ random: inout SplitMix64) -> UInt64 {
        1 + random.next() % largestSize
    }
}
