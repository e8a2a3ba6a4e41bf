import Testing

@testable import CacheSimulation
@testable import TierCacheEviction

/// 2Q replayed step by step against the paper's pseudocode (Johnson & Shasha, VLDB 1994, Figure 2,
/// "full version") applied by hand. Queues are written most recent first.
@Suite struct TwoQPolicyTests {
    private struct Step: Equatable, CustomStringConvertible {
        var hit: Bool
        var am: [UInt64]
        var a1in: [UInt64]
        var a1out: [UInt64]
        var description: String { "\(hit ? "hit" : "miss") Am \(am) A1in \(a1in) A1out \(a1out)" }
    }

    private func replay(_ keys: [UInt64], capacity: UInt64, sizes: [UInt64: UInt32] = [:]) throws -> [Step] {
        let trace = try Trace(
            name: "hand", requests: keys.map { TraceRequest(key: $0, size: sizes[$0] ?? 1) }, hasSizes: !sizes.isEmpty)
        var keyOf: [UInt64] = []
        for key in keys where !keyOf.contains(key) { keyOf.append(key) }
        var policy = TraceReplay<TwoQPolicy>(capacity: capacity, objectSizes: trace.objectSizes)
        return trace.requests.enumerated().map { position, object in
            let hit = policy.access(object, position: position)
            let (am, a1in, a1out) = policy.policy.snapshot
            return Step(
                hit: hit, am: am.map { keyOf[Int($0)] }, a1in: a1in.map { keyOf[Int($0)] },
                a1out: a1out.map { keyOf[Int($0)] })
        }
    }

    @Test("Capacity 4 (Kin = 1, Kout = 2): free slots, correlated hits, A1out promotion, Am eviction")
    func paperRulesStepByStep() throws {
        let keys: [UInt64] = [1, 2, 1, 3, 4, 5, 1, 6, 2, 1, 7, 3, 2, 5, 6, 1, 3]
        let expected: [Step] = [
            // 1, 2: free slots, into A1in.
            Step(hit: false, am: [], a1in: [1], a1out: []),
            Step(hit: false, am: [], a1in: [2, 1], a1out: []),
            // 1: in A1in: a hit that changes nothing (a correlated reference).
            Step(hit: true, am: [], a1in: [2, 1], a1out: []),
            Step(hit: false, am: [], a1in: [3, 2, 1], a1out: []),
            Step(hit: false, am: [], a1in: [4, 3, 2, 1], a1out: []),
            // 5: no free slot; |A1in| = 4 > Kin = 1, so A1in's tail (1) is paged out, its key to A1out.
            Step(hit: false, am: [], a1in: [5, 4, 3, 2], a1out: [1]),
            // 1: in A1out → a miss; reclaim pages out A1in's tail 2 (→ A1out); 1 enters Am.
            Step(hit: false, am: [1], a1in: [5, 4, 3], a1out: [2]),
            // 6: a new key; A1in (3) > Kin: 3 is paged out to A1out.
            Step(hit: false, am: [1], a1in: [6, 5, 4], a1out: [3, 2]),
            // 2: in A1out → leaves it; A1in's tail 4 → A1out; 2 enters Am.
            Step(hit: false, am: [2, 1], a1in: [6, 5], a1out: [4, 3]),
            // 1: in Am → a hit, to Am's head.
            Step(hit: true, am: [1, 2], a1in: [6, 5], a1out: [4, 3]),
            // 7: A1in's tail 5 → A1out, which now holds 3 > Kout = 2 keys: its tail 3 is forgotten.
            Step(hit: false, am: [1, 2], a1in: [7, 6], a1out: [5, 4]),
            // 3: forgotten, so a new key: 6 → A1out, 4 forgotten; 3 enters A1in.
            Step(hit: false, am: [1, 2], a1in: [3, 7], a1out: [6, 5]),
            Step(hit: true, am: [2, 1], a1in: [3, 7], a1out: [6, 5]),
            // 5: in A1out → Am; A1in's tail 7 → A1out.
            Step(hit: false, am: [5, 2, 1], a1in: [3], a1out: [7, 6]),
            // 6: in A1out → Am; now |A1in| = 1 is not > Kin, so Am's LRU object (1) is paged out and
            // not remembered in A1out.
            Step(hit: false, am: [6, 5, 2], a1in: [3], a1out: [7]),
            // 1: a new key again; Am's tail 2 makes room.
            Step(hit: false, am: [6, 5], a1in: [1, 3], a1out: [7]),
            Step(hit: true, am: [6, 5], a1in: [1, 3], a1out: [7]),
        ]
        let steps = try replay(keys, capacity: 4)
        #expect(steps.count == expected.count)
        for (index, (step, want)) in zip(steps, expected).enumerated() {
            #expect(step == want, "after request \(index + 1) (key \(keys[index]))")
        }
    }

    /// libCacheSim's TwoQ admits no object larger than Kin, which is 0 below 4 objects: such a
    /// cache there never hits. This one admits as the paper's does (Kin a threshold).
    @Test("Capacity 1 (Kin = 0, Kout = 0) keeps the last object; capacity 0 never hits")
    func tinyCapacities() throws {
        // Capacity 1: A1in holds the one object; a new one pages it out to A1out, which keeps 0
        // keys, so nothing ever reaches Am: 1 miss, 1 hit, 2 miss, 1 miss, 1 hit.
        let one = try replay([1, 1, 2, 1, 1], capacity: 1)
        #expect(one.map(\.hit) == [false, true, false, false, true])
        #expect(one.last == Step(hit: true, am: [], a1in: [1], a1out: []))
        let zero = try replay([1, 1, 2, 1, 1], capacity: 0)
        #expect(zero.allSatisfy { !$0.hit && $0.am.isEmpty && $0.a1in.isEmpty && $0.a1out.isEmpty })
    }

    @Test(
        "Byte mode: Kin and Kout are byte budgets, reclaiming repeats until the object fits, larger than Kin is refused"
    )
    func byteMode() throws {
        // Capacity 100 B: Kin = 25 B, Kout = 50 B.
        let sizes: [UInt64: UInt32] = [1: 10, 2: 10, 3: 10, 4: 25, 5: 25, 6: 25, 7: 25, 8: 30]
        let steps = try replay([1, 2, 3, 4, 5, 6, 7, 8, 2], capacity: 100, sizes: sizes)
        // 1 to 5 fill 80 B. 6: 105 > 100 and A1in (80) > 25 → 1 is paged out; 95 fits.
        #expect(steps[5] == Step(hit: false, am: [], a1in: [6, 5, 4, 3, 2], a1out: [1]))
        // 7: 120 > 100 → 2 is paged out, 110 > 100 → 3 too; 100 fits.
        #expect(steps[6] == Step(hit: false, am: [], a1in: [7, 6, 5, 4], a1out: [3, 2, 1]))
        // 8 (30 B) is larger than Kin: a miss that changes nothing.
        #expect(steps[7] == Step(hit: false, am: [], a1in: [7, 6, 5, 4], a1out: [3, 2, 1]))
        // 2 (in A1out) leaves it before reclaiming; 110 > 100 and A1in (100) > 25 → 4 (25 B) is
        // paged out to A1out (45 B); 85 fits, so 2 enters Am.
        #expect(steps[8] == Step(hit: false, am: [2], a1in: [7, 6, 5], a1out: [4, 3, 1]))
    }

    /// Pushed, a key heavier than Kout emptied A1out of every key it held, itself included.
    @Test("A key heavier than Kout is not remembered, and A1out keeps the keys it held")
    func heavyKeyLeavesA1outAlone() {
        var policy = TwoQPolicy(context: PolicyContext(capacity: 100), inFraction: 0.6, outFraction: 0.2)
        // Kin = 60 B, Kout = 20 B. 1 (10), 2 (30), 3 (50) fill 90 B; 4 (50): 140 > 100 → 1 is paged
        // out (A1out 10 B), 130 > 100 → 2 (30 B, past Kout) leaves unremembered; 100 fits.
        for (slot, size) in [(UInt32(0), UInt64(10)), (1, 30), (2, 50), (3, 50)] {
            _ = policy.access(slot, size: size, keyHash: UInt64(slot), position: Int(slot))
        }
        #expect(policy.snapshot.a1in == [3, 2] && policy.snapshot.a1out == [0])
        #expect(policy.largestAdmissibleSize == 60)
    }

    @Test func namesParse() {
        #expect(PolicyKind(name: "2Q") == .twoQ)
        #expect(PolicyKind(name: "twoq") == .twoQ)
        #expect(PolicyKind(name: "LIRS") == .lirs)
        #expect(PolicyKind.twoQ.displayName == "2Q" && PolicyKind.lirs.displayName == "LIRS")
    }
}
