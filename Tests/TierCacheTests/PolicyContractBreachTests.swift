import Testing
import TierCache
import TierCacheEviction

/// A policy of your own that breaks `EvictionPolicy`'s contract stops at the breach, with a
/// message naming it, rather than leaving a memory tier to grow past its capacity, give a slot
/// two keys, or loop for ever under its lock. Each breach runs in a process of its own (an exit
/// test): it traps.
@Suite("Policy contract breaches stop with a message")
struct PolicyContractBreachTests {
    @Test("A policy that never evicts stops the store that would take the tier past its capacity")
    func neverEvicts() async {
        await #expect(processExitsWith: .failure) {
            let tier = try MemoryTier(capacity: 10_000, policyType: NeverEvictingPolicy.self)
            for index in 0..<200 {
                _ = tier.store(entry(30), forKey: try CacheKey("k\(index)"))
            }
        }
    }

    @Test("A policy that keeps a removed slot stops the removal, before the slot goes to another key")
    func keepsRemovedSlot() async {
        await #expect(processExitsWith: .failure) {
            let tier = try MemoryTier(capacity: 10_000, policyType: KeepsRemovedSlotPolicy.self)
            _ = tier.store(entry(3), forKey: try CacheKey("a"))
            tier.removeEntry(forKey: try CacheKey("a"))
        }
    }

    @Test("SlotQueues stops a push of a slot already in a queue (which would link it to itself)")
    func pushTwice() async {
        await #expect(processExitsWith: .failure) {
            var queues = SlotQueues(queueCount: 1, notingDepartures: true)
            queues.setSize(1, of: 0)
            queues.pushHead(0, 1)
            queues.pushHead(0, 1)
        }
        await #expect(processExitsWith: .failure) {
            var queues = SlotQueues(queueCount: 2, notingDepartures: true)
            queues.setSize(1, of: 0)
            queues.pushHead(0, 1)
            queues.pushTail(0, 2)
        }
    }

    @Test("A policy that keeps a removed slot stops a store changing the entry's size, before it counts the slot twice")
    func keepsRemovedSlotOnResize() async {
        await #expect(processExitsWith: .failure) {
            let tier = try MemoryTier(capacity: 10_000, policyType: KeepsRemovedSlotPolicy.self)
            _ = tier.store(entry(3), forKey: try CacheKey("a"))
            _ = tier.store(entry(5), forKey: try CacheKey("a"))
        }
    }

    @Test("SlotQueues stops a resize of a queued slot (its queue's weight would wrap) and a push to queue none")
    func resizeQueuedOrPushToNone() async {
        await #expect(processExitsWith: .failure) {
            var queues = SlotQueues(queueCount: 1, notingDepartures: true)
            queues.setSize(5, of: 0)
            queues.pushHead(0, 1)
            queues.setSize(10, of: 0)
        }
        await #expect(processExitsWith: .failure) {
            var queues = SlotQueues(queueCount: 1, notingDepartures: true)
            queues.setSize(1, of: 0)
            queues.pushHead(0, SlotQueues.none)
        }
        // Within the contract: out of its queue, resized, back in.
        var queues = SlotQueues(queueCount: 1, notingDepartures: true)
        queues.setSize(5, of: 0)
        queues.pushHead(0, 1)
        queues.remove(0)
        queues.setSize(10, of: 0)
        queues.pushHead(0, 1)
        #expect(queues.weight(1) == 10)
    }

    @Test("A policy whose departures pile up over requests stops, before every request walks them all")
    func hoardsDepartures() async {
        await #expect(processExitsWith: .failure) {
            let tier = try MemoryTier(capacity: 10_000, policyType: HoardsDeparturesPolicy.self)
            for index in 0..<5_000 { _ = tier.store(entry(30), forKey: try CacheKey("k\(index)")) }
        }
    }

    @Test("The same policies within their contract run: a store and a removal")
    func withinContract() throws {
        let tier = try MemoryTier(capacity: 10_000, policyType: NeverEvictingPolicy.self)
        #expect(tier.store(entry(1), forKey: try CacheKey("a")) == .stored)
        tier.removeEntry(forKey: try CacheKey("a"))
        #expect(tier.entry(forKey: try CacheKey("a")) == nil)
    }
}

/// Admits everything and evicts nothing (nor lists a departure): a breach once the tier is full.
struct NeverEvictingPolicy: EvictionPolicy {
    static let name = "never evicting"
    private var resident: Set<UInt32> = []
    init(context: PolicyContext) {}
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        !resident.insert(slot).inserted
    }
    mutating func remove(_ slot: UInt32) { resident.remove(slot) }
    mutating func removeAll() { resident.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { resident.contains(slot) }
    func remembers(_ slot: UInt32) -> Bool { resident.contains(slot) }
    var departures: ArraySlice<UInt32> { [] }
    var largestAdmissibleSize: UInt64 { .max }
    var residentsByRetention: [UInt32] { resident.sorted() }
}

/// LRU whose `remove(_:)` does nothing: the slot stays resident after its key is removed.
struct KeepsRemovedSlotPolicy: EvictionPolicy {
    static let name = "keeps removed slots"
    private var lru: LRUPolicy
    init(context: PolicyContext) { lru = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        lru.access(slot, size: size, keyHash: keyHash, position: position)
    }
    mutating func remove(_ slot: UInt32) {}
    mutating func removeAll() { lru.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { lru.isResident(slot) }
    func remembers(_ slot: UInt32) -> Bool { lru.remembers(slot) }
    var departures: ArraySlice<UInt32> { lru.departures }
    var largestAdmissibleSize: UInt64 { lru.largestAdmissibleSize }
    var residentsByRetention: [UInt32] { lru.residentsByRetention }
}

/// LRU that lists every departure since it began, as a policy forgetting
/// `SlotQueues.beginRequest()` does.
struct HoardsDeparturesPolicy: EvictionPolicy {
    static let name = "hoards departures"
    private var lru: LRUPolicy
    private var hoard: [UInt32] = []
    init(context: PolicyContext) { lru = LRUPolicy(context: context) }
    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        let hit = lru.access(slot, size: size, keyHash: keyHash, position: position)
        hoard += lru.departures
        return hit
    }
    mutating func remove(_ slot: UInt32) {
        lru.remove(slot)
        hoard += lru.departures
    }
    mutating func removeAll() {
        lru.removeAll()
        hoard = []
    }
    func isResident(_ slot: UInt32) -> Bool { lru.isResident(slot) }
    func remembers(_ slot: UInt32) -> Bool { lru.remembers(slot) }
    var departures: ArraySlice<UInt32> { hoard[...] }
    var largestAdmissibleSize: UInt64 { lru.largestAdmissibleSize }
    var residentsByRetention: [UInt32] { lru.residentsByRetention }
}
