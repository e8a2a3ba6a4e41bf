import CacheSimulation
import Testing

/// LIRS and 2Q against libCacheSim (the simulator of the reference runs), version 0.3.5
/// through its Python bindings: the figures below are what `scripts/libcachesim-reference.py`
/// prints (hit ratios in percent, request / byte).
///
/// - 2Q: libCacheSim's TwoQ is the same algorithm with the same Kin = 25%, Kout = 50%, so the hit
///   ratios agree to the last digit printed (0.0001 points), in object and in byte mode.
/// - LIRS: libCacheSim bounds stack S as a whole to 2 × the capacity, dropping the oldest
///   non-resident entries; ours by default bounds the non-resident entries alone (2 ×, as
///   Caffeine), which matches the LIRS paper's own tables (the published-table tests) where
///   libCacheSim's bound does not (OLTP at 1,000 and 2,000 objects, P12 at 32,768). With
///   libCacheSim's bound (`stackFactor: 2`) ours makes libCacheSim's decisions (within 0.05
///   points on every cell below, P traces included). (Byte mode differs by design: libCacheSim
///   refuses new objects larger than Lhirs, ours lets Q use what the LIR set leaves; not compared.)
@Suite(.enabled(if: SharedTraces.available, SharedTraces.missingMessage), .serialized)
struct LibCacheSimReferenceTests {
    struct Reference: Sendable {
        let trace: String
        let unit: CapacityUnit
        let capacities: [UInt64]
        let lirs: [Double]
        let twoQ: [Double]
        let twoQBytes: [Double]
    }

    static let oltp = Reference(
        trace: "arc/OLTP.lis.zst", unit: .objects, capacities: [1000, 2000, 5000, 10000, 15000],
        lirs: [34.5765, 42.4472, 52.6234, 60.3269, 63.9774],
        twoQ: [40.5256, 46.5103, 55.7284, 62.5847, 65.7197], twoQBytes: [])
    static let cloudObjects = Reference(
        trace: "libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst", unit: .objects, capacities: [49, 490, 4897, 9795],
        lirs: [11.8282, 16.8558, 24.8200, 34.4123],
        twoQ: [13.1657, 16.9489, 22.5797, 30.4570], twoQBytes: [])
    static let cloudBytes = Reference(
        trace: "libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst", unit: .bytes,
        capacities: [2_029_770, 20_297_697, 202_976_973, 405_953_946],
        lirs: [], twoQ: [16.0048, 17.2360, 23.0478, 27.7979], twoQBytes: [1.8057, 2.1733, 9.8341, 15.4707])

    @Test(
        "2Q equals libCacheSim's TwoQ",
        arguments: [Self.oltp, Self.cloudObjects, Self.cloudBytes].map {
            ($0.trace, $0.unit, $0.capacities, $0.twoQ, $0.twoQBytes)
        })
    func twoQ(trace: String, unit: CapacityUnit, capacities: [UInt64], hits: [Double], byteHits: [Double]) throws {
        let simulator = try Simulator(trace: SharedTraces.trace(trace), unit: unit)
        for (index, result) in simulator.replay(policies: [.twoQ], capacities: capacities).enumerated() {
            #expect(
                abs(result.hitRatio * 100 - hits[index]) <= 0.0001,
                "2Q on \(trace) at \(result.capacity): \(result.hitRatio * 100) vs libCacheSim \(hits[index])")
            if !byteHits.isEmpty {
                #expect(
                    abs(result.byteHitRatio * 100 - byteHits[index]) <= 0.0001,
                    "2Q bytes at \(result.capacity): \(result.byteHitRatio * 100) vs \(byteHits[index])")
            }
        }
    }

    /// libCacheSim's ARC hit ratios on cloudPhysicsIO in byte mode, at `cloudBytes`' capacities
    /// (miss ratios 0.836931, 0.822195, 0.768767, 0.685586).
    static let arcBytes: [Double] = [16.3069, 17.7805, 23.1233, 31.4414]

    @Test("ARC with libCacheSim's byte-mode rules makes libCacheSim's decisions; the default differs by design")
    func arcInByteMode() throws {
        let simulator = try Simulator(trace: SharedTraces.trace(Self.cloudBytes.trace), unit: .bytes)
        for (capacity, expected) in zip(Self.cloudBytes.capacities, Self.arcBytes) {
            let measured = simulator.replay(ARCLikeLibCacheSim.self, capacity: capacity).hitRatio * 100
            #expect(abs(measured - expected) <= 0.0001, "ARC at \(capacity) B: \(measured) vs libCacheSim \(expected)")
        }
    }

    /// libCacheSim's LIRS hit ratios on the ARC paper's P traces at the cells where the default
    /// LIRS departed most (miss ratios 0.727124, 0.821618, 0.722915, 0.845549 and 0.736135, from
    /// libCacheSim 0.3.5's Python bindings as `scripts/libcachesim-reference.py` runs them).
    static let lirsOnPTraces: [(trace: String, capacity: UInt64, hits: Double)] = [
        ("arc/P6.lis.zst", 32_768, 27.2876), ("arc/P3.lis.zst", 32_768, 17.8382), ("arc/P2.lis.zst", 32_768, 27.7085),
        ("arc/P12.lis.zst", 32_768, 15.4451), ("arc/P12.lis.zst", 65_536, 26.3865),
    ]

    @Test(
        "LIRS with libCacheSim's bound on S (2 × the capacity, all entries) is within 0.05 points of libCacheSim's LIRS",
        arguments: [Self.oltp, Self.cloudObjects].map { ($0.trace, $0.capacities, $0.lirs) }
            + lirsOnPTraces.map { ($0.trace, [$0.capacity], [$0.hits]) })
    func lirs(trace: String, capacities: [UInt64], hits: [Double]) throws {
        let simulator = try Simulator(trace: SharedTraces.trace(trace), unit: .objects)
        for (capacity, expected) in zip(capacities, hits) {
            let measured = simulator.replay(LIRSBoundedLikeLibCacheSim.self, capacity: capacity).hitRatio * 100
            #expect(
                abs(measured - expected) <= 0.05,
                "LIRS on \(trace) at \(capacity): \(measured) vs libCacheSim \(expected)")
        }
    }
}

/// ARC adapting as libCacheSim's does in byte mode.
struct ARCLikeLibCacheSim: EvictionPolicyVariant {
    static let name = "ARC (libCacheSim)"
    var base: ARCPolicy
    init(context: PolicyContext) { base = ARCPolicy(context: context, adaptation: .libCacheSim) }
}

/// LIRS with Lhirs = 1% and libCacheSim's bound: all of S within 2 × the capacity.
struct LIRSBoundedLikeLibCacheSim: EvictionPolicyVariant {
    static let name = "LIRS S=2c"
    var base: LIRSPolicy
    init(context: PolicyContext) {
        base = LIRSPolicy(
            context: context, hirFraction: LIRSPolicy.defaultHIRFraction, nonResidentFactor: .infinity, stackFactor: 2)
    }
}
