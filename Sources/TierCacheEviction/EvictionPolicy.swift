/// An eviction policy over dense slot ids: the one implementation of each policy's rules, run by
/// the simulator (slots are a trace's object ids) and by `MemoryTier` (slots come from its key
/// table, with values and costs beside them).
///
/// ## The contract
/// - **Slots.** A slot names one object for as long as the policy ``remembers(_:)`` it. The
///   simulator's slots are dense ids `0..<objectCount`; the memory tier reuses a slot once the
///   policy forgets it. Keep per-slot state in arrays indexed by slot, grown as slots appear
///   (``SlotQueues`` does both), and set it when a slot is admitted: a reused slot holds what its
///   last object left (a reference bit, a count), which the simulator's fresh ids never do. Slot
///   ids stay below ``PolicyContext/maximumSlotCount``. Decisions never depend on which number a
///   slot has (a tie broken by the lower slot id, a random pick among ids): the tier numbers
///   objects otherwise than the simulator does, and what the simulator measured is what the
///   tier is to do.
/// - **Requests.** ``access(_:size:keyHash:position:)`` is one request: a hit when the slot is
///   resident, else a miss after which the policy decides whether to admit the object, evicting
///   what it must to stay within ``PolicyContext/capacity`` (a sum of sizes: objects when every
///   size is 1, bytes otherwise). An object larger than ``largestAdmissibleSize`` is never
///   admitted. An access that hits evicts nothing.
/// - **Reporting.** After every call, ``departures`` lists the slots that may have left the cache
///   or the policy's memory (a superset is fine); the driver asks ``isResident(_:)`` and
///   ``remembers(_:)`` of each.
/// - **Bounded memory.** What a policy remembers of objects no longer resident (ghost entries:
///   ARC's, LIRS's non-resident HIR blocks) is bounded by a multiple of what the cache holds: the
///   memory tier keeps each remembered slot's key until the policy forgets it, so a history that
///   never forgets grows the tier's key table with every key ever stored.
/// - **Bounded work.** A policy that runs in a `MemoryTier` does bounded work per request
///   (amortized O(1) or O(log n)), under the tier's lock, and never reads the future: only the
///   simulator fills ``PolicyContext/nextUse``, for policies whose ``needsFuture`` is true
///   (Belady's MIN), and the tier refuses them.
///
/// A policy of your own conforms to this protocol; it then runs in `Simulator.replay(_:capacity:)`
/// and in `MemoryTier(capacity:policyType:)` unchanged. `PolicyConformanceSuite`
/// (`TierCacheTesting`) checks the contract in a test: the simulator reads only hits, and a
/// `MemoryTier` stops, with a precondition naming the rule, on the breaches it sees as it runs:
/// resident sizes past the capacity (a policy that does not evict, or evicts without listing the
/// slots in ``departures``), a removed slot still remembered, and departures that pile up across
/// requests. It does not check the others (a hit that evicts, a history that never forgets,
/// which grows its key table): run the suite.
///
/// The protocol refines `SendableMetatype`: a policy's type travels between tasks (a list of
/// policies replayed in parallel, a benchmark subject's factory), though its instances stay with
/// one driver.
public protocol EvictionPolicy: SendableMetatype {
    /// The name used in reports, e.g. `"LRU"`.
    static var name: String { get }
    /// Offline policies (Belady's MIN) read the future: the simulator then fills
    /// ``PolicyContext/nextUse``. Online policies answer false (the default).
    static var needsFuture: Bool { get }
    /// Whether the policy reads the `keyHash` of requests (W-TinyLFU's sketch counts keys). A
    /// driver may skip hashing keys for policies that answer false (the default).
    static var usesKeyHash: Bool { get }

    /// An empty cache of `context`'s capacity.
    init(context: PolicyContext)

    /// Serves a request for the object in `slot`.
    ///
    /// - Parameters:
    ///   - slot: the object's slot.
    ///   - size: the object's size, in the capacity's unit; a resident object's size does not
    ///     change between requests (a driver that stores a new size first removes the slot).
    ///   - keyHash: a well-mixed 64-bit hash of the object's key, for policies that count keys
    ///     (W-TinyLFU's sketch): equal keys always give equal hashes.
    ///   - position: the request's position in the trace, for offline policies; 0 in a tier.
    /// - Returns: true on a hit. On a miss the policy has decided whether to admit the object.
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool

    /// Forgets `slot`: it leaves the cache and whatever history the policy keeps of it.
    mutating func remove(_ slot: UInt32)

    /// Forgets every slot.
    mutating func removeAll()

    /// Whether `slot`'s object is in the cache.
    func isResident(_ slot: UInt32) -> Bool

    /// Whether the policy keeps anything of `slot` (resident, or remembered in a ghost list): a
    /// driver may give a slot to another key only once this is false.
    func remembers(_ slot: UInt32) -> Bool

    /// The slots that may have left the cache or the policy's memory during the last call.
    var departures: ArraySlice<UInt32> { get }

    /// The largest size the policy admits; the capacity unless the policy says less (S3-FIFO's
    /// small queue bounds it).
    var largestAdmissibleSize: UInt64 { get }

    /// Resident slots, the one the policy would evict last first. O(n): for tests and
    /// diagnostics.
    var residentsByRetention: [UInt32] { get }

    /// A hint that `slot`, carrying `keyHash`, is requested soon: the policy may start loading
    /// the memory that request will read (its node, its sketch counters), so that the cache
    /// misses of several requests overlap instead of each waiting in turn. It must change nothing
    /// the policy decides. The simulator calls it a few requests ahead of each request (the
    /// trace is known); the memory tier never does. By default it does nothing.
    ///
    /// It is `mutating` only so that a driver calls it on the policy where it lies: a
    /// non-mutating call on a policy that is not inlined passes a copy of the whole policy (the
    /// simulator copied W-TinyLFU's 336 bytes per request, 5% of its replay's instructions).
    mutating func prefetch(_ slot: UInt32, keyHash: UInt64)
}

extension EvictionPolicy {
    /// Online policies do not look ahead.
    public static var needsFuture: Bool { false }
    /// Most policies count slots, not keys.
    public static var usesKeyHash: Bool { false }
    /// No prefetching.
    @inlinable @inline(__always)
    public mutating func prefetch(_ slot: UInt32, keyHash: UInt64) {}
}

/// What a policy knows before the first request.
public struct PolicyContext: Sendable {
    /// The capacity: a sum of the sizes given with each request (objects when they are all 1,
    /// bytes otherwise); at most ``maximumCapacity``.
    public let capacity: UInt64
    /// How many slots the driver expects (the trace's distinct objects), so that per-slot arrays
    /// are sized once; 0 when unknown (they grow as slots appear).
    public let expectedSlots: Int
    /// For offline policies: for each trace position, the position of the same object's next
    /// request, or `UInt32.max` when there is none. Empty for online policies.
    public let nextUse: [UInt32]
    /// Whether the driver reads ``EvictionPolicy/departures``. The simulator does not (it keeps
    /// no values), so policies may skip noting them; `MemoryTier` does.
    public let readsDepartures: Bool

    /// The largest capacity a policy is given, 2^60 (an exbibyte, or that many objects): a larger
    /// one, such as `UInt64.max` for a cache that never fills, is treated as this. Below it, every
    /// policy's sums of sizes stay well inside 64 bits (ARC's directory holds twice the capacity,
    /// LIRS's stack up to three times), so no policy needs to check them for overflow.
    public static let maximumCapacity: UInt64 = 1 << 60

    /// How many slots a driver numbers at most: slot ids run from 0 to `Int32.max - 1`, since
    /// ``SlotQueues`` links slots by 32-bit signed ids (half the size of 64-bit links, on every
    /// node a request touches). The simulator's traces stay below it (`Trace.maximumRequestCount`);
    /// `MemoryTier` refuses a new key while this many are in use (keys of resident entries and of
    /// those its policy remembers): a tier of the smallest entries reaches it past 130 GiB, or
    /// past a third of that under a policy that remembers twice as many keys as it holds.
    public static let maximumSlotCount = Int(Int32.max)

    /// A context for a policy of `capacity` (at most ``maximumCapacity``); a negative
    /// `expectedSlots` counts as 0.
    public init(capacity: UInt64, expectedSlots: Int = 0, nextUse: [UInt32] = [], readsDepartures: Bool = true) {
        self.capacity = min(capacity, Self.maximumCapacity)
        self.expectedSlots = max(0, expectedSlots)
        self.nextUse = nextUse
        self.readsDepartures = readsDepartures
    }
}

/// The key hash the simulator gives a trace's object id: ids are dense, so they are mixed
/// (SplitMix64's finalizer) into a hash whose bits a sketch can use. A memory tier that must take
/// the simulator's decisions for a trace gives each key the hash of the id it stands for.
public enum TraceKeyHash {
    /// The hash of `id`.
    @inlinable
    public static func of(_ id: UInt32) -> UInt64 {
        var x = UInt64(id) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
