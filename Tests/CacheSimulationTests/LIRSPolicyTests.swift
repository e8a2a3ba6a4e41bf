import Testing

@testable import CacheSimulation
@testable import TierCacheEviction

/// LIRS replayed step by step on small traces, against the paper's rules applied by hand
/// (Jiang & Zhang, SIGMETRICS 2002, section 3.3 and Figure 2).
///
/// States are written `S: top … bottom | Q: end … front`, each entry of S tagged L (LIR),
/// H (resident HIR) or N (non-resident HIR); Q's front is the next victim.
@Suite struct LIRSPolicyTests {
    private struct Replay {
        var hits: [Bool] = []
        var states: [String] = []
    }

    /// Replays `keys` (unit sizes unless `sizes` names some) and records the hit and the state after each request.
    private func replay(
        _ keys: [UInt64], capacity: UInt64, sizes: [UInt64: UInt32] = [:],
        nonResidentFactor: Double = LIRSPolicy.defaultNonResidentFactor
    ) throws -> Replay {
        let trace = try Trace(
            name: "hand", requests: keys.map { TraceRequest(key: $0, size: sizes[$0] ?? 1) }, hasSizes: !sizes.isEmpty)
        var keyOf: [UInt64] = []
        for key in keys where !keyOf.contains(key) { keyOf.append(key) }
        var policy = TraceReplay(
            LIRSPolicy(
                context: PolicyContext(capacity: capacity, expectedSlots: trace.objectCount),
                hirFraction: LIRSPolicy.defaultHIRFraction, nonResidentFactor: nonResidentFactor),
            objectSizes: trace.objectSizes)
        var result = Replay()
        for (position, object) in trace.requests.enumerated() {
            result.hits.append(policy.access(object, position: position))
            let stack = policy.policy.stackS.map { entry in
                "\(keyOf[Int(entry.object)])" + (entry.status == .lir ? "L" : entry.status == .residentHIR ? "H" : "N")
            }
            let q = policy.policy.listQ.map { "\(keyOf[Int($0)])" }
            result.states.append("S: \(stack.joined(separator: " ")) | Q: \(q.joined(separator: " "))")
        }
        return result
    }

    @Test("Capacity 3 (Llirs = 2, Lhirs = 1): warm-up, all five cases of the paper, pruning")
    func paperRulesStepByStep() throws {
        let keys: [UInt64] = [1, 2, 3, 4, 3, 1, 1, 4, 3, 5, 4, 2, 3, 5, 5, 4]
        let replay = try replay(keys, capacity: 3)
        let expected: [(hit: Bool, state: String)] = [
            // 1, 2: the LIR set is not full, so first references become LIR.
            (false, "S: 1L | Q: "),
            (false, "S: 2L 1L | Q: "),
            // 3: the LIR set is full (2); a free buffer remains, so 3 is a resident HIR block.
            (false, "S: 3H 2L 1L | Q: 3"),
            // 4: a miss; Q's front (3) is evicted and, being in S, stays there as non-resident.
            (false, "S: 4H 3N 2L 1L | Q: 4"),
            // 3: non-resident in S → evict Q's front (4, stays in S as N), 3 becomes LIR, the bottom
            // LIR block 1 goes to the end of Q as resident HIR; 2 is now the bottom (LIR, no pruning).
            (false, "S: 3L 4N 2L | Q: 1"),
            // 1: a resident HIR block not in S → a hit; to the top of S, stays HIR, to the end of Q.
            (true, "S: 1H 3L 4N 2L | Q: 1"),
            // 1: a resident HIR block in S → a hit; it becomes LIR and leaves Q; the bottom LIR (2)
            // goes to the end of Q; pruning removes 4N (forgotten) so that 3L is the bottom.
            (true, "S: 1L 3L | Q: 2"),
            // 4: forgotten, so a new HIR block; Q's front 2 is evicted and, not in S, forgotten.
            (false, "S: 4H 1L 3L | Q: 4"),
            // 3: a LIR hit at the bottom → to the top; 1L is the new bottom, nothing to prune.
            (true, "S: 3L 4H 1L | Q: 4"),
            // 5: a miss; 4 is evicted and stays in S as non-resident.
            (false, "S: 5H 3L 4N 1L | Q: 5"),
            // 4: non-resident in S → evict 5 (stays as N), 4 becomes LIR, bottom LIR 1 → Q.
            (false, "S: 4L 5N 3L | Q: 1"),
            // 2: forgotten → new HIR block; 1 is evicted and, not in S, forgotten.
            (false, "S: 2H 4L 5N 3L | Q: 2"),
            // 3: a LIR hit at the bottom → top; pruning drops 5N, 4L is the bottom.
            (true, "S: 3L 2H 4L | Q: 2"),
            // 5: forgotten → new HIR; 2 is evicted and stays in S as non-resident.
            (false, "S: 5H 3L 2N 4L | Q: 5"),
            // 5: resident HIR in S → LIR; bottom LIR 4 → Q; pruning drops 2N, 3L is the bottom.
            (true, "S: 5L 3L | Q: 4"),
            // 4: resident HIR not in S → a hit, to the top of S and the end of Q, still HIR.
            (true, "S: 4H 5L 3L | Q: 4"),
        ]
        #expect(replay.hits == expected.map(\.hit))
        for (step, (state, want)) in zip(replay.states, expected.map(\.state)).enumerated() {
            #expect(state == want, "after request \(step + 1) (key \(keys[step]))")
        }
    }

    @Test("A loop one block larger than the cache: LRU never hits, LIRS keeps two blocks LIR")
    func loopKeepsTheLIRSet() throws {
        // Capacity 3 (Llirs 2, Lhirs 1), keys 1 2 3 4 looped five times.
        // Pass 1 (as in the first test): 1L, 2L, 3H, then 4 evicts 3 → S: 4H 3N 2L 1L | Q: 4.
        // Pass 2: 1 is a LIR hit at the bottom → S: 1L 4H 3N 2L. 2 is a LIR hit at the bottom →
        // pruning drops 3N and 4H (which stays in Q) → S: 2L 1L | Q: 4. 3 is not in S: a new HIR
        // block, evicting 4 (not in S: forgotten) → S: 3H 2L 1L | Q: 3. 4 evicts 3 (→ N) →
        // S: 4H 3N 2L 1L | Q: 4, the state after pass 1. So every later pass hits 1 and 2 only.
        let keys = Array((0..<5).map { _ in [1, 2, 3, 4] as [UInt64] }.joined())
        let replay = try replay(keys, capacity: 3)
        #expect(
            replay.hits == [false, false, false, false]
                + Array(repeating: [true, true, false, false], count: 4).joined())
        #expect(replay.states[7] == "S: 4H 3N 2L 1L | Q: 4")
        #expect(replay.states.last == "S: 4H 3N 2L 1L | Q: 4")
        // LRU with three buffers misses every request of a four-block loop.
        #expect(try PolicyTestsSupport.hits(.lru, keys, capacity: 3).allSatisfy { !$0 })
    }

    @Test("A scan of one-time keys cycles through Q and leaves the hot LIR blocks resident")
    func scanResistance() throws {
        // Capacity 20 (Llirs 19, Lhirs 1). 1 2 3 (twice) are LIR from the warm-up; the scan's first
        // 16 keys fill the LIR set, every later one is a new HIR block that evicts the previous one
        // from Q. No HIR block is requested again, so no LIR block is ever demoted: 1 2 3 hit.
        let hot: [UInt64] = [1, 2, 3]
        let keys = hot + hot + (100..<200).map { UInt64($0) } + hot
        let replay = try replay(keys, capacity: 20)
        #expect(replay.hits.suffix(3) == [true, true, true])
        #expect(replay.hits.filter { $0 }.count == 6)
    }

    @Test("The non-resident bound drops the entry evicted longest ago, so its return is a plain miss")
    func nonResidentEntriesAreBounded() throws {
        // Capacity 3, non-resident entries limited to 1/3 × 3 = 1. After 1 2 3 4 the state is
        // S: 4H 3N 2L 1L (as in the first test). 5 evicts 4 (→ N): two non-resident entries, so
        // 3, evicted first, is dropped from S. 3 then returns as a new HIR block (not LIR), evicting 5.
        let bounded = try replay([1, 2, 3, 4, 5, 3], capacity: 3, nonResidentFactor: 1.0 / 3.0)
        #expect(bounded.states[4] == "S: 5H 4N 2L 1L | Q: 5")
        #expect(bounded.states[5] == "S: 3H 5N 2L 1L | Q: 3")
        // Unbounded (the paper), 3 is still in S when it returns, so it becomes LIR and demotes 1.
        let unbounded = try replay([1, 2, 3, 4, 5, 3], capacity: 3, nonResidentFactor: .infinity)
        #expect(unbounded.states[4] == "S: 5H 4N 3N 2L 1L | Q: 5")
        #expect(unbounded.states[5] == "S: 3L 5N 4N 2L | Q: 1")
    }

    @Test("Capacity 1 (Llirs = 0) behaves as LRU of one object; capacity 0 never hits")
    func tinyCapacities() throws {
        // Llirs = 0: nothing can be LIR, every block is HIR in the single buffer (Q).
        // 1 miss; 1 hit (in S, but too big for an empty LIR set: stays HIR); 2 evicts 1 (→ N);
        // 1 misses (N, cannot become LIR) and evicts 2; 1 hits.
        let one = try replay([1, 1, 2, 1, 1], capacity: 1)
        #expect(one.hits == [false, true, false, false, true])
        #expect(one.states[3] == "S: 1H 2N | Q: 1")
        let zero = try replay([1, 1, 2, 1, 1], capacity: 0)
        #expect(zero.hits.allSatisfy { !$0 })
        #expect(zero.states.allSatisfy { $0 == "S:  | Q: " })
    }

    @Test("Byte mode: the LIR set holds capacity − 1%, objects too large for the rest are only remembered")
    func byteMode() throws {
        // Capacity 100 B: Lhirs = 1 B, Llirs = 99 B. Sizes a=50, b=40, c=30, d=20 (keys 1 2 3 4).
        let sizes: [UInt64: UInt32] = [1: 50, 2: 40, 3: 30, 4: 20]
        let replay = try replay([1, 2, 3, 3, 4, 2, 1], capacity: 100, sizes: sizes)
        #expect(replay.hits == [false, false, false, false, false, true, false])
        #expect(
            replay.states == [
                "S: 1L | Q: ",  // 50 B of LIR
                "S: 2L 1L | Q: ",  // 90 B of LIR
                // 3 (30 B): the LIR set cannot take it (120 > 99) and only 10 B are left: remembered in S, not cached.
                "S: 3N 2L 1L | Q: ",
                // 3 again while in S → LIR (120 B): the bottom LIR 1 (50 B) is demoted to Q, then evicted
                // (70 + 50 > 100) and, no longer in S, forgotten.
                "S: 3L 2L | Q: ",
                "S: 4L 3L 2L | Q: ",  // 4 (20 B): 90 B of LIR, still fits
                "S: 2L 4L 3L | Q: ",  // a LIR hit at the bottom; 3L is the new bottom
                "S: 1N 2L 4L 3L | Q: ",  // 1 (50 B) > the 10 B left: remembered only
            ])
    }
}

/// Shared by the policy test suites: a built-in policy's hit sequence on unit-size keys.
enum PolicyTestsSupport {
    static func hits(_ kind: PolicyKind, _ keys: [UInt64], capacity: UInt64) throws -> [Bool] {
        let trace = try Trace(name: "hand", requests: keys.map { TraceRequest(key: $0) })
        func run<P: EvictionPolicy>(_ type: P.Type) -> [Bool] {
            var policy = TraceReplay<P>(capacity: capacity, objectSizes: trace.objectSizes)
            return trace.requests.enumerated().map { policy.access($1, position: $0) }
        }
        return run(kind.policyType)
    }
}
