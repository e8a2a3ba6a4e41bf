import TierCacheEviction

/// The entries of a ``MemoryTier`` under one eviction policy: the key table, and the values and
/// costs beside the policy's slots. The policy (``TierCacheEviction/EvictionPolicy``) decides; this
/// store keeps what it decided true of the entries.
///
/// - A lookup that finds a resident entry is a request for its slot (a hit).
/// - A store of a new key (or of a key the policy remembers in a ghost list) is a request that
///   misses: the policy admits the entry and evicts. The tier's own rules (the entry-size limit,
///   expiry) were applied before, so every policy sees the same requests, and the simulator's
///   replay of the same lookups and stores makes the same decisions.
/// - A store over a resident entry of the same cost is a hit that replaces the value; one of
///   another cost takes the old entry out first and is admitted afresh.
/// - The entry-count limit is kept by weight (``MemoryTier``'s "The entry-count limit"): each
///   entry weighs at least `minimumWeight` for the policy.
///
/// After each request the store reads the policy's ``TierCacheEviction/EvictionPolicy/departures``:
/// a slot no longer resident loses its value, and a slot the policy no longer remembers frees its
/// key, so slot ids are reused. Not thread-safe: the tier guards it with a lock.
struct PolicyStore<Policy: TierCacheEviction.EvictionPolicy>: EvictingStore {
    private var policy: Policy
    private var slotByKey: [CacheKey: UInt32] = [:]
    private var keys: [CacheKey?] = []
    /// How many departures the policy listed when last settled (see `settle(sparing:)`).
    private var departuresLastSettled = 0
    /// Each resident slot's entry and cost, and every slot's key hash (for a policy that counts
    /// keys); a vacant entry for slots the policy only remembers (and free ones). One array
    /// rather than three, so that a hit reads one cache line for all of them (W-TinyLFU's get hit
    /// read a second, for the hash); not optional, so that a field is read and written in place
    /// (an optional's `?.cost` or a bound copy retained and released the entry on every
    /// overwrite).
    private var residents: [Resident] = []
    private var freeSlots: [UInt32] = []
    /// The most slots in use at once (`PolicyContext.maximumSlotCount`; fewer in tests).
    private let maximumSlots: Int
    private let minimumWeight: Int
    /// The policy's capacity (the tier's, at most `PolicyContext.maximumCapacity`).
    private let capacity: Int
    private let keyHash: @Sendable (CacheKey) -> UInt64
    private let usesKeyHash: Bool
    private(set) var totalCost = 0
    private(set) var count = 0
    var requests = RequestCounts()

    /// A store of `capacity` bytes in which each entry weighs at least `minimumWeight` for the
    /// policy (the entry-count limit, ``MemoryTier/Configuration/minimumEntryWeight``); `keyHash`
    /// hashes keys for policies that count them (computed once per store). A store of a new key
    /// while `maximumSlots` slots are in use is refused.
    init(
        capacity: Int, minimumWeight: Int, maximumSlots: Int = PolicyContext.maximumSlotCount,
        keyHash: @escaping @Sendable (CacheKey) -> UInt64
    ) {
        self.maximumSlots = maximumSlots
        let context = PolicyContext(capacity: UInt64(capacity))
        policy = Policy(context: context)
        self.capacity = Int(clamping: context.capacity)
        self.minimumWeight = minimumWeight
        self.keyHash = keyHash
        usesKeyHash = Policy.usesKeyHash
    }

    var largestAdmissibleCost: Int { Int(clamping: policy.largestAdmissibleSize) }

    @inline(__always)
    private func weight(_ cost: Int) -> UInt64 { UInt64(max(cost, minimumWeight)) }

    @inline(__always)
    mutating func lookup(_ key: CacheKey, evicted: inout Int) -> CacheEntry? {
        guard let slot = slotByKey[key] else { return nil }
        guard holdsValue(slot) else { return nil }
        let cost = residents[Int(slot)].cost
        // Read before the policy hears of the hit: whatever it then decides, the hit is served.
        let entry = residents[Int(slot)].entry
        _ = policy.access(slot, size: weight(cost), keyHash: hash(of: slot), position: 0)
        if !policy.departures.isEmpty { evicted += settle(sparing: nil) }
        return entry
    }

    mutating func store(_ entry: CacheEntry, cost: Int, for key: CacheKey) -> StoreResult {
        var slot = slotByKey[key]
        if let existing = slot, holdsValue(existing) {
            if residents[Int(existing)].cost == cost {
                residents[Int(existing)].entry = entry
                _ = policy.access(existing, size: weight(cost), keyHash: hash(of: existing), position: 0)
                return StoreResult(evicted: policy.departures.isEmpty ? 0 : settle(sparing: nil), admitted: true)
            }
            policy.remove(existing)
            settle(sparing: nil)
            // As in `remove(_:)`: a policy that still held the slot would count it resident at
            // its old size, and take the new entry for a hit.
            precondition(
                !policy.remembers(existing),
                "\(Policy.name).remove(_:) kept slot \(existing): a removed slot must be forgotten (EvictionPolicy's contract)"
            )
            slot = slotByKey[key]
        }
        guard let id = slot ?? allocate(key) else {
            return StoreResult(evicted: 0, admitted: false, slotsExhausted: true)
        }
        if usesKeyHash, slot == nil { residents[Int(id)].keyHash = keyHash(key) }
        _ = policy.access(id, size: weight(cost), keyHash: hash(of: id), position: 0)
        let evicted = settle(sparing: id)
        // A policy of your own that kept the old entry out of its departures (the contract's
        // breach, not a built-in's) still has it replaced: not counted twice if the new one is
        // admitted, not served if it is not.
        drop(id)
        let admitted = policy.isResident(id)
        if admitted {
            residents[Int(id)].entry = entry
            residents[Int(id)].cost = cost
            totalCost += cost
            count += 1
        } else if !policy.remembers(id) {
            free(id)
        }
        // A policy of your own that does not evict, or evicts without listing the slots in its
        // departures, would have the tier keep every value past its capacity, silently.
        precondition(
            totalCost <= capacity,
            "\(Policy.name) left \(totalCost) bytes resident in a capacity of \(capacity): a policy must evict to stay within its capacity and list the slots it evicts in `departures` (EvictionPolicy's contract)"
        )
        return StoreResult(evicted: evicted, admitted: admitted)
    }

    mutating func remove(_ key: CacheKey) {
        guard let slot = slotByKey[key] else { return }
        policy.remove(slot)
        settle(sparing: nil)
        // The slot goes to the next new key: a policy that still held it would give that key
        // this one's history (or count it resident at this one's size).
        precondition(
            !policy.remembers(slot),
            "\(Policy.name).remove(_:) kept slot \(slot): a removed slot must be forgotten (EvictionPolicy's contract)")
        free(slot)
    }

    mutating func removeAll() {
        policy.removeAll()
        slotByKey.removeAll()
        keys.removeAll()
        residents.removeAll()
        freeSlots.removeAll()
        totalCost = 0
        count = 0
        departuresLastSettled = 0
    }

    var keysByRetention: [CacheKey] {
        policy.residentsByRetention.compactMap { Int($0) < keys.count ? keys[Int($0)] : nil }
    }

    /// Applies the policy's last decisions: departed slots that are no longer resident lose their
    /// values (evictions, counted), and those it no longer remembers free their keys. `spared` is
    /// the slot being stored, which the caller settles itself.
    @discardableResult
    private mutating func settle(sparing spared: UInt32?) -> Int {
        // A policy of your own that never starts a request (`SlotQueues.beginRequest()`) lists
        // every departure since it began, and each request would walk them all under the tier's
        // lock, slower with every eviction (`DepartureLeak`). (One request that sweeps a queue
        // through pops and pushes may pass the bound; it does not grow.)
        let listed = policy.departures.count
        precondition(
            !DepartureLeak.isLeaking(listed: listed, lastListed: departuresLastSettled, slots: keys.count),
            "\(Policy.name) lists \(listed) departures for \(keys.count) slots, more with every request: departures are one request's (call SlotQueues.beginRequest() at the start of each access and removal; EvictionPolicy's contract)"
        )
        departuresLastSettled = listed
        var evicted = 0
        for slot in policy.departures where slot != spared && holdsKey(slot) {
            if holdsValue(slot), !policy.isResident(slot) {
                drop(slot)
                evicted += 1
            }
            if !policy.remembers(slot) { free(slot) }
        }
        return evicted
    }

    /// The slot's key hash, for a policy that counts keys; a policy that does not never reads it.
    @inline(__always)
    private func hash(of slot: UInt32) -> UInt64 { usesKeyHash ? residents[Int(slot)].keyHash : 0 }

    @inline(__always)
    private func holdsValue(_ slot: UInt32) -> Bool { residents[Int(slot)].cost != Resident.vacantCost }

    // `if case` rather than `!= nil`: on optionals of Equatable types the compiler may pick
    // Equatable's `==` on a tuple of two optionals, copying the value (see MemoryTier.entry(forKey:)).
    @inline(__always)
    private func holdsKey(_ slot: UInt32) -> Bool {
        guard Int(slot) < keys.count, case .some = keys[Int(slot)] else { return false }
        return true
    }

    /// Takes a resident slot's value out (it stays allocated).
    private mutating func drop(_ slot: UInt32) {
        guard holdsValue(slot) else { return }
        totalCost -= residents[Int(slot)].cost
        // The key hash stays: a policy may still remember the slot, and count its key again.
        residents[Int(slot)].entry = Resident.vacant.entry
        residents[Int(slot)].cost = Resident.vacantCost
        count -= 1
    }

    /// A slot for `key`: a freed one, else the next new one; nil when `maximumSlots` are in use.
    private mutating func allocate(_ key: CacheKey) -> UInt32? {
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
            keys[Int(slot)] = key
        } else {
            guard keys.count < maximumSlots else { return nil }
            slot = UInt32(keys.count)
            keys.append(key)
            residents.append(.vacant)
        }
        slotByKey[key] = slot
        return slot
    }

    private mutating func free(_ slot: UInt32) {
        guard let key = keys[Int(slot)] else { return }
        drop(slot)
        slotByKey.removeValue(forKey: key)
        keys[Int(slot)] = nil
        freeSlots.append(slot)
    }
}

/// A resident entry and the cost it was admitted at, and its slot's key hash.
private struct Resident {
    var entry: CacheEntry
    var cost: Int
    /// The slot's key hash for a policy that counts keys (0 for one that does not), kept while
    /// the slot holds its key, resident or only remembered; set afresh when a freed slot is
    /// given a new key.
    var keyHash: UInt64 = 0

    /// The cost no resident has (costs are at least the tier's per-entry overhead): a constant,
    /// so that checking it does not initialise ``vacant``.
    static let vacantCost = -1
    /// What a slot without a resident entry holds: one shared empty entry, so it keeps no value
    /// alive.
    static let vacant = Resident(entry: CacheEntry(value: [UInt8](), storedAt: .distantPast), cost: vacantCost)
}
