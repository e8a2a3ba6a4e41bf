import CacheSimulation
import Foundation
import Testing
import TierCache

@testable import TierCacheEviction

/// `MemoryTier`'s policies take the simulator's decisions: the same trace replayed through the
/// tier (a lookup, and a store on a miss) and through the simulator's policy of the same name, in
/// byte mode with each object's size set to the tier's cost of its entry, hits on exactly the same
/// requests. So the hit ratio `tiercache tune` reports for a policy is the one the tier reaches.
@Suite("MemoryTier policies take the simulator's decisions")
struct MemoryTierPolicyEquivalenceTests {
    /// The tier's policies and the simulator's types of the same name: every online policy.
    static let pairs: [(MemoryTier.EvictionPolicy, PolicyKind)] = PolicyKind.allCases.compactMap { kind in
        kind.memoryTierPolicy.map { ($0, kind) }
    }
    static let pairIndices = Array(pairs.indices)

    @Test("Every online policy of the simulator runs in the tier")
    func everyOnlinePolicy() {
        #expect(Self.pairs.count == 9)
        #expect(Set(Self.pairs.map(\.0)) == Set(MemoryTier.EvictionPolicy.allCases))
    }

    /// A trace of dense object ids with one size (value bytes) per object.
    struct Workload {
        var requests: [UInt32]
        var valueSizes: [Int]
    }

    /// The simulator's hash of an object id for W-TinyLFU's sketch (`TinyLFUSketch.mix(id, 0)`);
    /// the tier is given the same hash of the key naming that id, so both sketches count alike.
    static func sketchHash(_ id: UInt32) -> UInt64 {
        var x = UInt64(id) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    /// Fixed-width keys, so that equal values give equal costs.
    static func keyText(_ id: UInt32) -> String {
        let digits = String(id)
        return "k" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    static func cost(valueSize: Int, id: UInt32) -> Int {
        valueSize + keyText(id).utf8.count + MemoryTier.perEntryOverhead
    }

    /// Per-request hits of the tier and of the simulator, replaying `workload` at `capacity` bytes.
    static func replay(
        _ workload: Workload, capacity: Int, tierPolicy: MemoryTier.EvictionPolicy, simulatorPolicy: PolicyKind
    ) throws -> (tier: [Bool], simulator: [Bool]) {
        let tier = try MemoryTier(
            .init(capacity: capacity, maxEntryFraction: 1, policy: tierPolicy),
            keyHash: { key in TraceKeyHash.of(UInt32(key.rawValue.dropFirst()) ?? 0) })
        return (
            replayThroughTier(workload, tier, capacity: capacity),
            replayThroughSimulator(workload, simulatorPolicy.policyType, capacity: capacity)
        )
    }

    /// Per-request hits of `tier`: a lookup, and a store on a miss.
    static func replayThroughTier(_ workload: Workload, _ tier: MemoryTier, capacity: Int) -> [Bool] {
        let keys = (0..<workload.valueSizes.count).compactMap { try? CacheKey(keyText(UInt32($0))) }
        var values: [Int: CacheEntry] = [:]
        var tierHits: [Bool] = []
        tierHits.reserveCapacity(workload.requests.count)
        for id in workload.requests {
            let key = keys[Int(id)]
            if tier.entry(forKey: key) != nil {
                tierHits.append(true)
                continue
            }
            tierHits.append(false)
            let size = workload.valueSizes[Int(id)]
            let entry =
                values[size]
                ?? CacheEntry(value: [UInt8](repeating: 1, count: size), storedAt: Date(timeIntervalSince1970: 0))
            values[size] = entry
            _ = tier.store(entry, forKey: key)
            #expect(tier.usage().bytes <= capacity)
        }
        return tierHits
    }

    /// Per-request hits of the simulator's `type`, in byte mode with each object's size its entry's cost.
    static func replayThroughSimulator<P: EvictionPolicy>(_ workload: Workload, _ type: P.Type, capacity: Int) -> [Bool]
    {

        let sizes = workload.valueSizes.indices.map { UInt32(cost(valueSize: workload.valueSizes[$0], id: UInt32($0))) }
        var policy = TraceReplay<P>(capacity: UInt64(capacity), objectSizes: sizes)
        return workload.requests.enumerated().map { policy.access($1, position: $0) }
    }

    static func expectSameDecisions(
        _ workload: Workload, capacity: Int, _ pair: (MemoryTier.EvictionPolicy, PolicyKind)
    ) throws {
        let (tier, simulator) = try replay(workload, capacity: capacity, tierPolicy: pair.0, simulatorPolicy: pair.1)
        expectSame(tier, simulator, "\(pair.0) and the simulator's \(pair.1)")
    }

    static func expectSame(_ tier: [Bool], _ simulator: [Bool], _ names: String) {
        let firstDifference = zip(tier, simulator).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "\(names) first differ at request \(firstDifference ?? -1)")
        let tierHits = tier.filter { $0 }.count
        #expect(tierHits == simulator.filter { $0 }.count)
        // A replay where nothing hits, or nothing is evicted, would prove little.
        #expect(tierHits > 0 && tierHits < tier.count)
    }

    /// Zipf(0.9)-distributed ids over `objects` ids by inverse-CDF sampling with a fixed SplitMix64
    /// stream, so every run replays the same requests.
    static func zipf(objects: Int, requests: Int, valueSize: (UInt32) -> Int) -> Workload {
        var cumulative: [Double] = []
        cumulative.reserveCapacity(objects)
        var sum = 0.0
        for rank in 1...objects {
            sum += 1 / pow(Double(rank), 0.9)
            cumulative.append(sum)
        }
        var state: UInt64 = 0x1234_5678
        var ids: [UInt32] = []
        ids.reserveCapacity(requests)
        for _ in 0..<requests {
            state &+= 0x9E37_79B9_7F4A_7C15
            let uniform = Double(sketchHash(UInt32(truncatingIfNeeded: state >> 20)) >> 11) / Double(1 << 53) * sum
            var low = 0
            var high = objects - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] < uniform { low = middle + 1 } else { high = middle }
            }
            // Ranks are scattered over ids so that popularity does not follow id order.
            ids.append(UInt32((low &* 7_919) % objects))
        }
        return Workload(requests: ids, valueSizes: (0..<objects).map { valueSize(UInt32($0)) })
    }

    @Test("Same hits on a Zipf trace with equal entry sizes", arguments: pairIndices)
    func zipfUniformSizes(pairIndex: Int) throws {
        let workload = Self.zipf(objects: 5_000, requests: 60_000) { _ in 1 }
        let entryCost = Self.cost(valueSize: 1, id: 0)
        for entries in [100, 700] {
            try Self.expectSameDecisions(workload, capacity: entries * entryCost, Self.pairs[pairIndex])
        }
    }

    @Test("Same hits on a Zipf trace with entry sizes from 1 byte to 2 KB", arguments: pairIndices)
    func zipfVariableSizes(pairIndex: Int) throws {
        let workload = Self.zipf(objects: 5_000, requests: 60_000) { id in 1 + Int(Self.sketchHash(id ^ 0x5A5A) % 2_048)
        }
        for capacity in [300 << 10, 2 << 20] {
            try Self.expectSameDecisions(workload, capacity: capacity, Self.pairs[pairIndex])
        }
    }

    @Test("Same hits while W-TinyLFU's climber moves the window")
    func movingWindow() throws {
        // Phases of fresh working sets that fit the cache: the climber moves the window from 1%
        // towards the whole cache (WindowClimberTests), so both must make the same moves.
        let requests = WindowClimberTests.phases(30, keysPerPhase: 600, requestsPerPhase: 8_000)
        let workload = Workload(requests: requests, valueSizes: [Int](repeating: 1, count: 30 * 600))
        let capacity = 1_000 * Self.cost(valueSize: 1, id: 0)
        var policy = TraceReplay<WTinyLFUPolicy>(
            capacity: UInt64(capacity),
            objectSizes: (0..<workload.valueSizes.count).map { UInt32(Self.cost(valueSize: 1, id: UInt32($0))) })
        for (position, id) in requests.enumerated() { _ = policy.access(id, position: position) }
        #expect(
            policy.policy.windowMaximum > capacity / 2, "the window must have moved for this test to prove anything")
        try Self.expectSameDecisions(workload, capacity: capacity, (.wTinyLFU, .wtinylfu))
    }

    @Test("Same hits across W-TinyLFU's miniature rests, and a window moved in a spell after them")
    func windowMovedAfterRests() throws {
        // 600 entries sample 1 key in 2: after 2^20 requests the miniatures rest 302,400 requests
        // between spells of 4,800 (WindowClimberTests). A hot set among one-time keys keeps the
        // window small through the warm-up; fresh working sets that fit the cache then call for a
        // larger one, found in a spell.
        let (requests, changeAt, objectCount) = WindowClimberTests.hotThenPhases(
            hotRequests: 1_100_000, seed: 17, phases: 60)
        let workload = Workload(requests: requests, valueSizes: [Int](repeating: 1, count: objectCount))
        let capacity = 600 * Self.cost(valueSize: 1, id: 0)
        var policy = TraceReplay<WTinyLFUPolicy>(
            capacity: UInt64(capacity),
            objectSizes: (0..<workload.valueSizes.count).map { UInt32(Self.cost(valueSize: 1, id: UInt32($0))) })
        var windowAtChange = 0
        for (position, id) in requests.enumerated() {
            if position == changeAt { windowAtChange = policy.policy.windowMaximum }
            _ = policy.access(id, position: position)
        }
        #expect(
            policy.policy.windowMaximum > windowAtChange,
            "the window must have moved after the rests began for this test to prove anything")
        try Self.expectSameDecisions(workload, capacity: capacity, (.wTinyLFU, .wtinylfu))
    }

    @Test("A policy of the app's own makes the same decisions in the tier as in the simulator")
    func userPolicy() throws {
        let workload = Self.zipf(objects: 5_000, requests: 60_000) { id in 1 + Int(Self.sketchHash(id ^ 0x5A5A) % 2_048)
        }
        for capacity in [300 << 10, 2 << 20] {
            let tier = try MemoryTier(capacity: capacity, policyType: LFUPolicy.self)
            #expect(tier.policy == nil && tier.policyName == "LFU")
            let tierHits = Self.replayThroughTier(workload, tier, capacity: capacity)
            let simulatorHits = Self.replayThroughSimulator(workload, LFUPolicy.self, capacity: capacity)
            Self.expectSame(tierHits, simulatorHits, "LFU in the tier and in the simulator")
            #expect(tierHits.contains(true) && tierHits.contains(false))
        }
    }

    @Test("A hit a policy answers by evicting the object is still served, and the entry then leaves the tier")
    func hitThatEvicts() throws {
        let tier = try MemoryTier(capacity: 1 << 20, policyType: ServeOncePolicy.self)
        let key = try CacheKey("once")
        let entry = CacheEntry(value: [1, 2, 3], storedAt: Date(timeIntervalSince1970: 0))
        #expect(tier.store(entry, forKey: key) == .stored)
        #expect(tier.entry(forKey: key)?.value == [1, 2, 3])
        #expect(tier.entry(forKey: key) == nil)
        #expect(tier.usage().entries == 0 && tier.usage().bytes == 0)
        #expect(tier.statistics().evictions == 1)
    }

    @Test(
        "A policy that forgets a slot without listing it as a departure still has the entry replaced, not counted twice"
    )
    func silentRemovalKeepsTheAccounts() throws {
        let tier = try MemoryTier(capacity: 1 << 20, policyType: SilentRemovalLRU.self)
        let key = try CacheKey("k")
        #expect(
            tier.store(CacheEntry(value: [UInt8](repeating: 1, count: 100), storedAt: .distantPast), forKey: key)
                == .stored)
        // Another cost: the tier removes the old entry from the policy, then stores the new one.
        let larger = CacheEntry(value: [UInt8](repeating: 2, count: 200), storedAt: .distantPast)
        #expect(tier.store(larger, forKey: key) == .stored)
        #expect(tier.usage().entries == 1)
        #expect(tier.usage().bytes == 200 + 1 + MemoryTier.perEntryOverhead)
        #expect(tier.entry(forKey: key)?.value.count == 200)
    }

    @Test("An offline policy is refused by the tier with a typed error")
    func offlinePolicyRefused() {
        let error = #expect(throws: TierCacheError.self) {
            try MemoryTier(capacity: 1 << 20, policyType: BeladyPolicy.self)
        }
        #expect(error?.code == .invalidConfiguration)
    }

    /// Real traces, if `TIERCACHE_TRACES` names the public trace folder: a LIRS block trace (equal
    /// sizes) and libCacheSim's CloudPhysics sample (block sizes 512 B and up).
    @Test("Same hits on real traces", arguments: pairIndices)
    func realTraces(pairIndex: Int) throws {
        guard let folder = ProcessInfo.processInfo.environment["TIERCACHE_TRACES"] else {
            print("skipped: set TIERCACHE_TRACES to the public trace folder to replay real traces")
            return
        }
        let lirs = try Trace.load(TraceReader(path: folder + "/lirs/multi2.trace.gz"))
        let lirsWorkload = Workload(requests: lirs.requests, valueSizes: [Int](repeating: 1, count: lirs.objectCount))
        try Self.expectSameDecisions(
            lirsWorkload, capacity: 600 * Self.cost(valueSize: 1, id: 0), Self.pairs[pairIndex])

        let cloud = try Trace.load(
            TraceReader(path: folder + "/libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst"), limit: 60_000)
        let cloudWorkload = Workload(requests: cloud.requests, valueSizes: cloud.objectSizes.map { Int($0) })
        let largest = cloudWorkload.valueSizes.max() ?? 1
        // At least 20 of the largest entry, so the entry-size rules of both never refuse one.
        try Self.expectSameDecisions(
            cloudWorkload, capacity: max(64 << 20, 25 * (largest + 200)), Self.pairs[pairIndex])
    }
}

@Suite("The memory tier configuration a tuning result names")
struct MemoryTierConfigurationTests {
    @Test func snippets() throws {
        #expect(
            PolicyKind.s3fifo.memoryTierConfiguration(capacityBytes: 256 << 20)
                == "MemoryTier(capacity: 256 << 20, policy: .s3fifo)")
        #expect(
            PolicyKind.wtinylfu.memoryTierConfiguration(capacityBytes: 1_536)
                == "MemoryTier(capacity: 1536, policy: .wTinyLFU)")
        #expect(
            PolicyKind.lru.memoryTierConfiguration(capacityBytes: 3 << 10)
                == "MemoryTier(capacity: 3 << 10, policy: .lru)")
        #expect(
            PolicyKind.lru.memoryTierConfiguration(capacityBytes: 1_000) == "MemoryTier(capacity: 1000, policy: .lru)")
        #expect(
            PolicyKind.arc.memoryTierConfiguration(capacityBytes: 1 << 20)
                == "MemoryTier(capacity: 1 << 20, policy: .arc)")
        #expect(PolicyKind.belady.memoryTierConfiguration(capacityBytes: 1 << 20) == nil, "MIN reads the future")
        // A policy of the user's: the tuner recommends it as it recommends a built-in.
        #expect(
            SimulatedPolicy(LFUPolicy.self).memoryTierConfiguration(capacityBytes: 256 << 20)
                == "MemoryTier(.init(capacity: 256 << 20), policyType: LFUPolicy.self)")
        #expect(
            SimulatedPolicy(LFUPolicy.self).memoryTierConfiguration(capacityBytes: 1 << 20, largestEntry: 200_000)
                == "MemoryTier(.init(capacity: 1 << 20, maxEntryFraction: 0.191), policyType: LFUPolicy.self)")
        #expect(
            SimulatedPolicy.s3fifo.memoryTierConfiguration(capacityBytes: 1 << 20)
                == "MemoryTier(capacity: 1 << 20, policy: .s3fifo)")
        #expect(SimulatedPolicy.belady.memoryTierConfiguration(capacityBytes: 1 << 20) == nil)
        #expect(PolicyKind.s3fifo.memoryTierConfiguration(capacityBytes: 0) == nil)
        // An entry over the default 5% sets the fraction that admits it, which the tier accepts.
        #expect(
            PolicyKind.lru.memoryTierConfiguration(capacityBytes: 1 << 20, largestEntry: 52_428)
                == "MemoryTier(capacity: 1 << 20, policy: .lru)", "5% of 1 MiB, rounded down")
        for (largest, fraction) in [(52_429, 0.051), (131_072, 0.125), (1_048_575, 1), (1 << 30, 1)]
            as [(UInt64, Double)]
        {
            #expect(
                PolicyKind.lru.memoryTierConfiguration(capacityBytes: 1 << 20, largestEntry: largest)
                    == "MemoryTier(.init(capacity: 1 << 20, maxEntryFraction: \(fraction == 1 ? "1" : "\(fraction)"), policy: .lru))"
            )
            let tier = try MemoryTier(.init(capacity: 1 << 20, maxEntryFraction: fraction, policy: .lru))
            let key = try CacheKey("k")
            let value = [UInt8](
                repeating: 1,
                count: Int(min(largest, 1 << 20))
                    - MemoryTier.cost(of: CacheEntry(value: [], storedAt: Date()), forKey: key))
            // (An entry over the capacity, which the simulator does not admit either: the capacity.)
            #expect(tier.store(CacheEntry(value: value, storedAt: Date()), forKey: key).isStored)
        }
        // Every policy the tier has is named by one simulator policy.
        let named = Set(PolicyKind.allCases.compactMap(\.memoryTierPolicy))
        #expect(named == Set(MemoryTier.EvictionPolicy.allCases))
    }
}

/// A policy that serves each object once: a hit takes it out of the cache. Legal for a policy, if
/// odd; the tier must still serve that hit.
private struct ServeOncePolicy: EvictionPolicy {
    static let name = "serve once"
    private var queues: SlotQueues
    private let capacity: UInt64

    init(context: PolicyContext) {
        queues = SlotQueues(queueCount: 1, notingDepartures: context.readsDepartures)
        capacity = context.capacity
    }

    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        queues.beginRequest()
        if queues.queue(of: slot) != SlotQueues.none {
            queues.remove(slot)
            return true
        }
        guard size <= capacity else { return false }
        while queues.weight(1) + size > capacity, queues.popTail(1) != nil {}
        queues.setSize(size, of: slot)
        queues.pushHead(slot, 1)
        return false
    }

    mutating func remove(_ slot: UInt32) {
        queues.beginRequest()
        queues.remove(slot)
    }

    mutating func removeAll() { queues.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { queues.queue(of: slot) != SlotQueues.none }
    func remembers(_ slot: UInt32) -> Bool { isResident(slot) }
    var departures: ArraySlice<UInt32> { queues.departures }
    var largestAdmissibleSize: UInt64 { capacity }
    var residentsByRetention: [UInt32] { queues.members(of: 1) }
}

/// LRU whose `remove(_:)` lists nothing among its departures: a breach of the policy contract (a
/// policy of your own may have it), which the tier must survive with its byte and entry counts right.
private struct SilentRemovalLRU: EvictionPolicy {
    static let name = "LRU, silent on removal"
    private var lru: LRUPolicy
    private var silent = false

    init(context: PolicyContext) { lru = LRUPolicy(context: context) }

    mutating func access(_ slot: UInt32, size: UInt64, keyHash: UInt64, position: Int) -> Bool {
        silent = false
        return lru.access(slot, size: size, keyHash: keyHash, position: position)
    }

    mutating func remove(_ slot: UInt32) {
        lru.remove(slot)
        silent = true
    }

    mutating func removeAll() { lru.removeAll() }
    func isResident(_ slot: UInt32) -> Bool { lru.isResident(slot) }
    func remembers(_ slot: UInt32) -> Bool { lru.remembers(slot) }
    var departures: ArraySlice<UInt32> { silent ? [] : lru.departures }
    var largestAdmissibleSize: UInt64 { lru.largestAdmissibleSize }
    var residentsByRetention: [UInt32] { lru.residentsByRetention }
}
