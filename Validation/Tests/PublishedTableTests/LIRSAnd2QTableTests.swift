import CacheSimulation
import Foundation
import Testing

/// LIRS and 2Q against the columns the ARC paper prints for them (Megiddo & Modha, FAST 2003,
/// Tables IV and V), on the paper's own traces.
///
/// What the columns are decides the tolerance:
/// - Table IV's LIRS column (OLTP) is online, with the LIRS paper's Lhirs = 1%: ours (same Lhirs,
///   non-resident entries bounded to 2c) is within 0.05 points, except at c = 5000, see below.
/// - Table IV's and V's 2Q columns are "offline": the best Kin/Kout found with hindsight. Ours uses
///   the 2Q paper's recommended Kin = 25%, Kout = 50% for every trace and size. On OLTP these are
///   already within 0.15 points of the tuned figures (the tuned values must be close to them); on
///   P12 they are not, so the P12 check takes the best of a small grid of Kin values.
/// - Table V's LIRS column (P12) is offline too: Lhirs tuned per size. With the default 1% our
///   LIRS is far below it at small sizes (0.4% vs 4.08% at c = 1024: P12's long sequential runs
///   need a larger Q), so the check there replays a small grid of Lhirs values and takes the best.
/// The P12 checks replay 21 times (about 40 s optimised), at three of the table's ten sizes.
@Suite(.enabled(if: SharedTraces.available, SharedTraces.missingMessage), .serialized)
struct LIRSAnd2QTableTests {
    private func column(_ table: [String: Any], _ name: String) throws -> [Double] {
        let values = (table[name] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? []
        try #require(!values.isEmpty, "paper_tables.json has no column \(name)")
        return values
    }

    private func table(_ name: String) throws -> [String: Any] {
        try #require(try SharedTraces.paperTables()[name] as? [String: Any])
    }

    @Test("Table IV: LIRS on OLTP (online, Lhirs = 1%) within 0.05 points")
    func lirsOLTP() throws {
        let rows = try table("table_IV_OLTP")
        let capacities = try column(rows, "c").map { UInt64($0) }
        let published = try column(rows, "LIRS")
        try #require(capacities.count == published.count)
        let simulator = try Simulator(trace: SharedTraces.trace("arc/OLTP.lis.zst"), unit: .objects)
        let results = simulator.replay(policies: [.lirs], capacities: capacities)
        for (index, (result, expected)) in zip(results, published).enumerated() {
            let measured = result.hitRatio * 100
            if result.capacity == 5000 {
                // The paper's 47.14 at c = 5000 is out of line with its own column: 6.5 points below
                // LRU (53.65) where LIRS is within 2 points of LRU at every other size, and no Lhirs
                // from 1% to 30% gives less than 52.6 here. We only require the value to lie between
                // the paper's LIRS figures at the neighbouring sizes.
                #expect(
                    measured > published[index - 1] && measured < published[index + 1],
                    "LIRS on OLTP at c=5000: \(measured)")
                continue
            }
            #expect(
                abs(measured - expected) <= 0.05,
                "LIRS on OLTP at c=\(result.capacity): \(measured) vs published \(expected)")
        }
    }

    @Test("Table IV: 2Q on OLTP (paper's offline-tuned Kin/Kout; ours the recommended 25%/50%) within 0.15 points")
    func twoQOLTP() throws {
        let rows = try table("table_IV_OLTP")
        let capacities = try column(rows, "c").map { UInt64($0) }
        let published = try column(rows, "2Q_offline")
        try #require(capacities.count == published.count)
        let simulator = try Simulator(trace: SharedTraces.trace("arc/OLTP.lis.zst"), unit: .objects)
        for (result, expected) in zip(simulator.replay(policies: [.twoQ], capacities: capacities), published) {
            let measured = result.hitRatio * 100
            #expect(
                abs(measured - expected) <= 0.15,
                "2Q on OLTP at c=\(result.capacity): \(measured) vs published \(expected)")
        }
    }

    /// The best hit ratio (percent) of several parameter choices, as an offline column is made.
    private func best(_ simulator: Simulator, capacity: UInt64, of types: [any EvictionPolicy.Type]) -> (Double, String)
    {
        var best = (0.0, "")
        for type in types {
            let result = simulator.replay(type, capacity: capacity)
            if result.hitRatio * 100 > best.0 { best = (result.hitRatio * 100, type.name) }
        }
        return best
    }

    @Test("Table V: LIRS on P12 with the best of Lhirs = 1%, 5%, 20%, 99% (the column is offline) within 0.5 points")
    func lirsP12Offline() throws {
        // Measured with a finer grid (1, 2, 5, 10, 20, 30, 50, 70, 90, 99%), the best Lhirs lands
        // within 0.45 points of the column at all ten sizes: small caches want Lhirs near 99% (LIRS
        // then behaves like LRU, which the column matches there), large ones 1–20%. The paper does
        // not say which values it tried, hence 0.5 points. Three sizes keep the replays short.
        let rows = try table("table_V_P12")
        let capacities = try column(rows, "c").map { UInt64($0) }
        let published = try column(rows, "LIRS_offline")
        try #require(capacities.count == published.count)
        let simulator = try Simulator(trace: SharedTraces.trace("arc/P12.lis.zst"), unit: .objects)
        let grid: [any EvictionPolicy.Type] = [
            LIRSWith<Share1>.self, LIRSWith<Share5>.self, LIRSWith<Share20>.self, LIRSWith<Share99>.self,
        ]
        for (capacity, expected) in zip(capacities, published) where [1024, 32768, 524288].contains(capacity) {
            let (measured, chosen) = best(simulator, capacity: capacity, of: grid)
            #expect(
                abs(measured - expected) <= 0.5,
                "best LIRS on P12 at c=\(capacity) (\(chosen)): \(measured) vs published \(expected)")
        }
    }

    @Test("Table V: 2Q on P12 with the best of Kin = 5%, 25%, 90% (Kout 50%; the column is offline) within 0.3 points")
    func twoQP12Offline() throws {
        // With the recommended Kin = 25% our 2Q is 1 to 3.7 points below the column at c = 1024 and
        // c = 65536…131072: P12 wants a larger A1in for small caches (90%: 4.09 vs 4.13 at c = 1024)
        // and a smaller one for large caches (5%: 41.08 vs 41.09 at c = 131072).
        let rows = try table("table_V_P12")
        let capacities = try column(rows, "c").map { UInt64($0) }
        let published = try column(rows, "2Q_offline")
        try #require(capacities.count == published.count)
        let simulator = try Simulator(trace: SharedTraces.trace("arc/P12.lis.zst"), unit: .objects)
        let grid: [any EvictionPolicy.Type] = [TwoQWith<Share5>.self, TwoQWith<Share25>.self, TwoQWith<Share90>.self]
        for (capacity, expected) in zip(capacities, published) where [1024, 131072, 524288].contains(capacity) {
            let (measured, chosen) = best(simulator, capacity: capacity, of: grid)
            #expect(
                abs(measured - expected) <= 0.3,
                "best 2Q on P12 at c=\(capacity) (\(chosen)): \(measured) vs published \(expected)")
        }
    }
}

/// A share of the capacity, as a type, so that a parameterised policy is a policy type the simulator can replay.
protocol CapacityShare { static var fraction: Double { get } }
enum Share1: CapacityShare { static let fraction = 0.01 }
enum Share5: CapacityShare { static let fraction = 0.05 }
enum Share20: CapacityShare { static let fraction = 0.20 }
enum Share25: CapacityShare { static let fraction = 0.25 }
enum Share90: CapacityShare { static let fraction = 0.90 }
enum Share99: CapacityShare { static let fraction = 0.99 }

/// LIRS with Lhirs = `Share` of the capacity (non-resident entries bounded as by default).
struct LIRSWith<Share: CapacityShare>: EvictionPolicyVariant {
    static var name: String { "LIRS Lhirs=\(Share.fraction)" }
    var base: LIRSPolicy
    init(context: PolicyContext) {
        base = LIRSPolicy(
            context: context, hirFraction: Share.fraction, nonResidentFactor: LIRSPolicy.defaultNonResidentFactor)
    }
}

/// 2Q with Kin = `Share` of the capacity and the recommended Kout = 50%.
struct TwoQWith<Share: CapacityShare>: EvictionPolicyVariant {
    static var name: String { "2Q Kin=\(Share.fraction)" }
    var base: TwoQPolicy
    init(context: PolicyContext) {
        base = TwoQPolicy(context: context, inFraction: Share.fraction, outFraction: TwoQPolicy.defaultOutFraction)
    }
}
