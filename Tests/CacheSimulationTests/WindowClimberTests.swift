import CacheSimulation
import Testing
import TierCache

@testable import TierCacheEviction

/// W-TinyLFU's window sizing by miniature simulation (`MiniatureWindowClimber`), checked against
/// what follows from the algorithm's definition rather than against its own output.
@Suite("W-TinyLFU's window climber")
struct WindowClimberTests {
    /// A well-mixed 64-bit hash per key, as the simulator gives its objects.
    static func hash(_ key: UInt32) -> UInt64 { TinyLFUSketch.mix(key, 0) }

    /// Phases of `keysPerPhase` fresh keys each, requested uniformly at random `requestsPerPhase`
    /// times; no key outlives its phase. While a phase's keys fit in the cache, LRU misses each of
    /// them exactly once, which no policy can beat: every miss is a first reference.
    static func phases(_ count: Int, keysPerPhase: Int, requestsPerPhase: Int) -> [UInt32] {
        var state: UInt64 = 0x00C0_FFEE
        var keys: [UInt32] = []
        for phase in 0..<count {
            for _ in 0..<requestsPerPhase {
                state &+= 0x9E37_79B9_7F4A_7C15
                let offset = Int(TinyLFUSketch.mix(UInt32(truncatingIfNeeded: state >> 17), 1) % UInt64(keysPerPhase))
                keys.append(UInt32(phase * keysPerPhase + offset))
            }
        }
        return keys
    }

    /// `count` requests: a hot set of `hotKeys` keys (80% of them) among a stream of one-time keys
    /// (numbered from 1,001 up).
    static func hotAndScan(_ count: Int, hotKeys: UInt32, seed: UInt64) -> [UInt32] {
        var state = seed
        var next: UInt32 = 1_000
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            let draw = TinyLFUSketch.mix(UInt32(truncatingIfNeeded: state >> 13), 2)
            if draw % 10 < 8 { return UInt32(draw >> 32) % hotKeys }
            next += 1
            return next
        }
    }

    /// ``hotAndScan(_:hotKeys:seed:)`` (a small window is best), then `phases` phases of 360
    /// fresh keys requested 12,000 times each (LRU is best in a cache of 600); the keys are dense,
    /// `0..<objectCount`, and the phases start at request `changeAt`.
    static func hotThenPhases(
        hotRequests: Int, seed: UInt64, phases: Int
    ) -> (requests: [UInt32], changeAt: Int, objectCount: Int) {
        let hot = hotAndScan(hotRequests, hotKeys: 300, seed: seed)
        let offset = (hot.max() ?? 0) + 1
        let fresh = Self.phases(phases, keysPerPhase: 360, requestsPerPhase: 12_000).map { $0 + offset }
        return (hot + fresh, hot.count, Int(offset) + phases * 360)
    }

    @Test("A miniature whose window is the whole cache is LRU, request for request")
    func wholeWindowIsLRU() throws {
        // Skewed random keys, so that the main cache's frequency contest would matter if it ran.
        var state: UInt64 = 7
        let keys: [UInt32] = (0..<30_000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let uniform = Double(state >> 11) / Double(1 << 53)
            return UInt32(uniform * uniform * 3_000)
        }
        let trace = try Trace(name: "skewed", requests: keys.map { TraceRequest(key: UInt64($0)) })
        let lru = try Simulator(trace: trace, unit: .objects).replay(.lru, capacity: 300)
        var sketch = TinyLFUSketch()
        sketch.ensureCapacity(300)
        var miniatures = MiniatureCaches(capacity: 300, windowShares: [0.01, 1])
        for key in keys {
            miniatures.access(Self.hash(key), cost: 1, sketch: &sketch)
        }
        #expect(miniatures.misses[1] == trace.requestCount - lru.hits)
        // The 1% window's miniature is not LRU: the comparison can tell them apart.
        #expect(miniatures.misses[0] != miniatures.misses[1])
    }

    @Test("Keys never requested twice give the miniatures nothing to tell apart: the window stays")
    func noEvidenceNoMove() {
        var climber = MiniatureWindowClimber()
        climber.start(capacity: 2_000, entries: 2_000, initialShare: 0.01)
        #expect(climber.samplingModulus == 7)  // 2,000 entries / 256 per miniature
        var moves = 0
        for key in UInt32(0)..<200_000 where climber.record(Self.hash(key), cost: 1) != nil {
            moves += 1
        }
        #expect(moves == 0)
        #expect(climber.bestShare == 0.01)
    }

    @Test(
        "Phases of fresh working sets that fit the cache, where LRU is optimal: W-TinyLFU's window grows and its misses come within 0.5% of LRU's"
    )
    func recencyWorkloadMovesTheWindow() throws {
        // 40 phases of 600 keys in a cache of 1,000: LRU misses only first references.
        let keys = Self.phases(40, keysPerPhase: 600, requestsPerPhase: 12_000)
        let trace = try Trace(name: "phases", requests: keys.map { TraceRequest(key: UInt64($0)) })
        let firstReferences = Set(keys).count
        let simulator = try Simulator(trace: trace, unit: .objects)
        let lru = simulator.replay(.lru, capacity: 1_000)
        #expect(trace.requestCount - lru.hits == firstReferences)

        var policy = TraceReplay<WTinyLFUPolicy>(
            capacity: 1_000, objectSizes: [UInt32](repeating: 1, count: trace.objectCount))
        var misses = 0
        for (position, key) in trace.requests.enumerated() where !policy.access(key, position: position) {
            misses += 1
        }
        // A 1% window would hold 10 of the 600 keys; the climber must have moved it far enough to
        // hold a phase.
        #expect(policy.policy.windowMaximum >= 600)
        let excess = Double(misses - firstReferences) / Double(trace.requestCount)
        #expect(excess <= 0.005, "W-TinyLFU misses \(misses), first references \(firstReferences)")
    }

    @Test("A frequency-skewed workload keeps a small window: W-TinyLFU beats LRU")
    func frequencyWorkloadKeepsASmallWindow() throws {
        let keys = Self.hotAndScan(200_000, hotKeys: 500, seed: 11)
        let trace = try Trace(name: "hot-and-scan", requests: keys.map { TraceRequest(key: UInt64($0)) })
        let simulator = try Simulator(trace: trace, unit: .objects)
        let lru = simulator.replay(.lru, capacity: 600)
        let tinyLFU = simulator.replay(.wtinylfu, capacity: 600)
        #expect(tinyLFU.hits > lru.hits)
        var policy = TraceReplay<WTinyLFUPolicy>(
            capacity: 600, objectSizes: [UInt32](repeating: 1, count: trace.objectCount))
        for (position, key) in trace.requests.enumerated() { _ = policy.access(key, position: position) }
        // The scan keys would push the hot set out of a large window: it stays at most 20%.
        #expect(policy.policy.windowMaximum <= 120)
    }

    @Test("A cache sampled densely rests its miniatures after the warm-up, watching their share of requests")
    func denseSampleRestsBetweenSpells() {
        var climber = MiniatureWindowClimber()
        climber.start(capacity: 2_000, entries: 2_000, initialShare: 0.01)
        #expect(climber.samplingModulus == 7)
        // The warm-up: 64 turnovers, but at least 2^20 requests.
        var requests = 0
        while climber.isWatching, requests < 2_000_000 {
            _ = climber.record(Self.hash(UInt32(truncatingIfNeeded: requests)), cost: 1)
            requests += 1
        }
        #expect(requests == MiniatureWindowClimber.warmUpRequests)
        // Then spells of 8 turnovers (16,000 requests) and rests of 8 × (⌊128 / 7⌋ - 1) = 136
        // (272,000 requests): the miniatures watch 1 request in 18 (at least 7 in 128).
        var watched = 0
        var starts: [Int] = []
        for request in 0..<(3 * 288_000) {
            let wasWatching = climber.isWatching
            _ = climber.record(Self.hash(UInt32(truncatingIfNeeded: requests + request)), cost: 1)
            if climber.isWatching { watched += 1 }
            if climber.isWatching, !wasWatching { starts.append(request) }
        }
        #expect(starts == [271_999, 559_999, 847_999])
        #expect(watched == 3 * 16_000)
    }

    @Test(
        "A cache sampled at 1 key in 64 rests its miniatures after the warm-up; at 1 in 65 or more sparsely, never",
        arguments: [(16_639, 64, true), (16_640, 65, false), (20_000, 78, false)])
    func restsEndAtOneKeyIn65(entries: Int, modulus: UInt64, rests: Bool) {
        var climber = MiniatureWindowClimber()
        climber.start(capacity: entries, entries: entries, initialShare: 0.01)
        #expect(climber.samplingModulus == modulus)
        var rested = 0
        for key in UInt32(0)..<1_200_000 {
            _ = climber.record(Self.hash(key), cost: 1)
            if !climber.isWatching { rested += 1 }
        }
        // At 1 in 64 the warm-up is 64 turnovers (1,064,896 requests, more than 2^20), then a rest
        // of 8 turnovers (133,112 requests) before the next spell.
        #expect(rested == (rests ? 8 * 16_639 : 0))
    }

    @Test("Emptying the policy starts the miniatures' warm-up again")
    func removeAllRestartsTheWarmUp() {
        var policy = WTinyLFUPolicy(context: PolicyContext(capacity: 2_000, expectedSlots: 1_100_000))
        func request(_ key: UInt32) { _ = policy.access(key, size: 1, keyHash: Self.hash(key), position: Int(key)) }
        for key in UInt32(0)..<1_100_000 { request(key) }
        #expect(!policy.climberIsWatching, "past the warm-up, the miniatures rest")
        policy.removeAll()
        for key in UInt32(0)..<10_000 { request(key) }
        #expect(policy.climberIsWatching)
    }

    @Test("A change of workload long after the warm-up still moves the window, in a spell")
    func changeAfterWarmUpMovesTheWindow() throws {
        // A hot set of 300 keys (80% of requests) among one-time keys, then phases of fresh
        // working sets that fit the cache (LRU optimal), in a cache of 600 sampling 1 key in 2: its
        // miniatures rest 302,400 requests between spells of 4,800.
        let (keys, changeAt, _) = Self.hotThenPhases(hotRequests: 1_500_000, seed: 13, phases: 100)
        let trace = try Trace(name: "hot-then-phases", requests: keys.map { TraceRequest(key: UInt64($0)) })
        var policy = TraceReplay<WTinyLFUPolicy>(
            capacity: 600, objectSizes: [UInt32](repeating: 1, count: trace.objectCount))
        var windowAtChange = 0
        var lateMisses = 0
        for (position, key) in trace.requests.enumerated() {
            if position == changeAt { windowAtChange = policy.policy.windowMaximum }
            if !policy.access(key, position: position), position >= keys.count - 240_000 { lateMisses += 1 }
        }
        #expect(windowAtChange <= 120)
        #expect(policy.policy.windowMaximum >= 360)
        // The last 20 phases: each key's first reference, and within 0.5% of requests more.
        #expect(Double(lateMisses - 20 * 360) / 240_000 <= 0.005, "\(lateMisses) misses")
    }
}
