import CacheSimulation
import Testing

/// LIRS and 2Q against libCacheSim (the simulator of the reference runs), version 0.3.5
/// through its Python bindings: the figures below are what `scripts/libcachesim-reference.py`
/// prints (hit ratios in percent, request / byte).
///
/// - 2Q: libCacheSim's TwoQ is the same algorithm with the same Kin = 25%, Kout = 50%, so the hit
///   ratios agree to the last digit printed (0.0001 points), in object and in byte mode.
/// - LIRS: libCacheSim bounds stack S as a whole to 2 × the capacity, dropping the oldest
///   non-resident entries; ours bounds the non-resident entries alone (2 × by default, as Caffeine).
///   With the bound at 1 × the capacity (S then holds about c of LIR and resident HIR entries plus
///   c of non-resident ones, like libCacheSim's) ours agrees within 0.02 points on OLTP and
///   cloudPhysics. (Byte mode differs by design: libCacheSim refuses new objects larger than
///   Lhirs, ours lets Q use what the LIR set leaves; not compared.)
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

    @Test(
        "LIRS with non-resident entries bounded to 1 × the capacity is within 0.02 points of libCacheSim's LIRS",
        arguments: [Self.oltp, Self.cloudObjects].map { ($0.trace, $0.capacities, $0.lirs) })
    func lirs(trace: String, capacities: [UInt64], hits: [Double]) throws {
        let simulator = try Simulator(trace: SharedTraces.trace(trace), unit: .objects)
        for (capacity, expected) in zip(capacities, hits) {
            let measured = simulator.replay(LIRSOneCapacityOfGhosts.self, capacity: capacity).hitRatio * 100
            #expect(
                abs(measured - expected) <= 0.02,
                "LIRS on \(trace) at \(capacity): \(measured) vs libCacheSim \(expected)")
        }
    }
}

/// LIRS with Lhirs = 1% and non-resident entries bounded to 1 × the capacity.
struct LIRSOneCapacityOfGhosts: EvictionPolicy {
    static let name = "LIRS nonResident=1c"
    private var policy: LIRSPolicy
    init(context: PolicyContext) {
        policy = LIRSPolicy(context: context, hirFraction: LIRSPolicy.defaultHIRFraction, nonResidentFactor: 1)
    }
    mutating func access(_ object: UInt32, position: Int) -> Bool { policy.access(object, position: position) }
}
