import Testing

@testable import CacheSimulation
@testable import TierCacheEviction

/// The rules both papers state as invariants, checked after every request of random byte-mode
/// traces at capacities from 0 up: what is resident fits, each part stays in its budget, and a
/// request hits exactly when its object was resident.
@Suite struct LIRSAnd2QInvariantTests {
    /// A deterministic random trace: 1,500 requests over 200 keys, skewed, with sizes 1...300.
    private func randomTrace(seed: UInt64) throws -> Trace {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let sizes = (0..<200).map { _ in UInt32(1 + next() % 300) }
        let requests = (0..<1_500).map { _ -> TraceRequest in
            let uniform = Double(next() % 1_000_000) / 1_000_000
            let key = Int(uniform * uniform * 200)
            return TraceRequest(key: UInt64(key), size: sizes[key])
        }
        return try Trace(name: "random", requests: requests, hasSizes: true)
    }

    private let capacities: [UInt64] = [0, 1, 2, 3, 50, 300, 1_000, 5_000, 40_000]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func lirs(seed: UInt64) throws {
        let trace = try randomTrace(seed: seed)
        for capacity in capacities {
            var policy = TraceReplay<LIRSPolicy>(capacity: capacity, objectSizes: trace.objectSizes)
            let lirLimit = capacity - min(capacity, max(1, capacity / 100))
            for (position, object) in trace.requests.enumerated() {
                let before = policy.policy.stackS
                let size = { (id: UInt32) in UInt64(trace.objectSizes[Int(id)]) }
                let lirBefore = before.filter { $0.status == .lir }.reduce(0) { $0 + size($1.object) }
                let wasResident =
                    policy.policy.listQ.contains(object) || before.contains { $0.object == object && $0.status == .lir }
                #expect(policy.access(object, position: position) == wasResident, "c=\(capacity) request \(position)")
                let stack = policy.policy.stackS
                let lir = stack.filter { $0.status == .lir }.reduce(0) { $0 + size($1.object) }
                let q = policy.policy.listQ.reduce(0) { $0 + size($1) }
                let nonResident = stack.filter { $0.status == .nonResidentHIR }.reduce(0) { $0 + size($1.object) }
                #expect(
                    lir + q <= capacity && lir <= lirLimit, "c=\(capacity) request \(position): LIR \(lir) B, Q \(q) B")
                #expect(nonResident <= 2 * capacity)
                if lir > 0 {
                    #expect(stack.last?.status == .lir, "c=\(capacity) request \(position): S's bottom is not LIR")
                }
                // A resident object stays resident when requested; a missing one is admitted when it
                // fits in what the LIR set leaves (else it may still enter as LIR, or only be remembered).
                if wasResident || size(object) <= capacity - lirBefore {
                    let resident =
                        policy.policy.listQ.contains(object)
                        || stack.contains { $0.object == object && $0.status == .lir }
                    #expect(resident, "c=\(capacity) request \(position): object \(object) not resident")
                }
            }
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func twoQ(seed: UInt64) throws {
        let trace = try randomTrace(seed: seed)
        for capacity in capacities {
            var policy = TraceReplay<TwoQPolicy>(capacity: capacity, objectSizes: trace.objectSizes)
            for (position, object) in trace.requests.enumerated() {
                let before = policy.policy.snapshot
                let wasResident = before.am.contains(object) || before.a1in.contains(object)
                #expect(policy.access(object, position: position) == wasResident, "c=\(capacity) request \(position)")
                let after = policy.policy.snapshot
                let weight = { (ids: [UInt32]) in ids.reduce(0) { $0 + UInt64(trace.objectSizes[Int($1)]) } }
                #expect(weight(after.am) + weight(after.a1in) <= capacity)
                #expect(weight(after.a1out) <= capacity / 2)
                #expect(Set(after.a1out).isDisjoint(with: Set(after.am + after.a1in)))
                // Every object that fits A1in (Kin) is resident right after its request.
                let size = UInt64(trace.objectSizes[Int(object)])
                let admissible = policy.policy.largestAdmissibleSize
                #expect(size > admissible || after.am.contains(object) || after.a1in.contains(object))
                // A hit in A1in changes nothing (a correlated reference).
                if before.a1in.contains(object) { #expect(after.a1in == before.a1in && after.am == before.am) }
            }
        }
    }

    @Test(
        "Capacities near UInt64.max and unusual parameters build and cache everything",
        arguments: [UInt64.max, UInt64.max - 1, 1 << 63])
    func hugeCapacities(capacity: UInt64) throws {
        let trace = try randomTrace(seed: 4)
        let context = PolicyContext(capacity: capacity, expectedSlots: trace.objectCount)
        func hits<P: EvictionPolicy>(_ policy: P) -> Int {
            var replay = TraceReplay(policy, objectSizes: trace.objectSizes)
            return trace.requests.enumerated().filter { replay.access($1, position: $0) }.count
        }
        let counts = [
            hits(LIRSPolicy(context: context)),
            hits(LIRSPolicy(context: context, hirFraction: .nan, nonResidentFactor: .infinity)),
            hits(LIRSPolicy(context: context, hirFraction: 2, nonResidentFactor: -1)),
            hits(TwoQPolicy(context: context)),
            hits(TwoQPolicy(context: context, inFraction: 1, outFraction: .infinity)),
        ]
        // Nothing is ever evicted: every request but the first of each object hits.
        for (index, count) in counts.enumerated() {
            #expect(count == trace.requestCount - trace.objectCount, "policy \(index) at \(capacity)")
        }
    }
}
