import CacheSimulation
import Foundation
import Testing

/// LRU and ARC against the hit ratios published in the ARC paper (Megiddo & Modha, FAST 2003),
/// on the paper's own traces: LRU to within ±0.01 and ARC to within ±0.05 percentage points.
@Suite(.enabled(if: SharedTraces.available, SharedTraces.missingMessage), .serialized)
struct PublishedTableTests {
    private func column(_ table: [String: Any], _ name: String) -> [Double] {
        (table[name] as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } ?? []
    }

    private func check(trace file: String, table: String, policy: SimulatedPolicy, tolerance: Double) throws {
        let tables = try SharedTraces.paperTables()
        let rows = try #require(tables[table] as? [String: Any])
        let capacities = column(rows, "c").map { UInt64($0) }
        let published = column(rows, policy == .lru ? "LRU" : "ARC")
        try #require(capacities.count == published.count && !capacities.isEmpty)
        let simulator = try Simulator(trace: SharedTraces.trace(file), unit: .objects)
        let results = simulator.replay(policies: [policy], capacities: capacities)
        for (result, expected) in zip(results, published) {
            let measured = result.hitRatio * 100
            #expect(
                abs(measured - expected) <= tolerance,
                "\(policy) on \(file) at c=\(result.capacity): \(measured) vs published \(expected)")
        }
    }

    @Test("Table IV: LRU on OLTP") func lruOLTP() throws {
        try check(trace: "arc/OLTP.lis.zst", table: "table_IV_OLTP", policy: .lru, tolerance: 0.01)
    }

    @Test("Table IV: ARC on OLTP") func arcOLTP() throws {
        try check(trace: "arc/OLTP.lis.zst", table: "table_IV_OLTP", policy: .arc, tolerance: 0.05)
    }

    @Test("Table V: LRU on P12") func lruP12() throws {
        try check(trace: "arc/P12.lis.zst", table: "table_V_P12", policy: .lru, tolerance: 0.01)
    }

    @Test("Table V: ARC on P12") func arcP12() throws {
        try check(trace: "arc/P12.lis.zst", table: "table_V_P12", policy: .arc, tolerance: 0.05)
    }

    @Test("Table VIII: LRU and ARC at c = 32768 on P2, P3, P6, P12", arguments: ["P2", "P3", "P6", "P12"])
    func atAGlance(trace name: String) throws {
        let tables = try SharedTraces.paperTables()
        let glance = try #require(tables["table_VIII_at_a_glance_c32768"] as? [String: Any])
        let row = try #require(glance[name] as? [String: Any])
        let lru = try #require((row["LRU"] as? NSNumber)?.doubleValue)
        let arc = try #require((row["ARC"] as? NSNumber)?.doubleValue)
        let simulator = try Simulator(trace: SharedTraces.trace("arc/\(name).lis.zst"), unit: .objects)
        let results = simulator.replay(policies: [.lru, .arc], capacities: [32768])
        #expect(abs(results[0].hitRatio * 100 - lru) <= 0.01, "LRU on \(name): \(results[0].hitRatio * 100) vs \(lru)")
        #expect(abs(results[1].hitRatio * 100 - arc) <= 0.05, "ARC on \(name): \(results[1].hitRatio * 100) vs \(arc)")
    }

    @Test(
        "Table III: the expanded traces have the published request and page counts",
        arguments: ["OLTP", "P2", "P3", "P6", "P12"])
    func traceSummary(trace name: String) throws {
        let tables = try SharedTraces.paperTables()
        let summary = try #require(tables["table_III_trace_summary"] as? [String: Any])
        let counts = (summary[name] as? [Any])?.compactMap { ($0 as? NSNumber)?.intValue } ?? []
        let trace = try SharedTraces.trace("arc/\(name).lis.zst")
        #expect(counts == [trace.requestCount, trace.objectCount])
    }

    @Test("Table IV: Belady's MIN on OLTP matches the paper's MIN column") func minOLTP() throws {
        let tables = try SharedTraces.paperTables()
        let rows = try #require(tables["table_IV_OLTP"] as? [String: Any])
        let capacities = column(rows, "c").map { UInt64($0) }
        let published = column(rows, "MIN")
        let simulator = try Simulator(trace: SharedTraces.trace("arc/OLTP.lis.zst"), unit: .objects)
        for (result, expected) in zip(simulator.replay(policies: [.belady], capacities: capacities), published) {
            #expect(
                abs(result.hitRatio * 100 - expected) <= 0.05,
                "MIN at c=\(result.capacity): \(result.hitRatio * 100) vs \(expected)")
        }
    }

    @Test("The one-pass exact LRU curve equals LRU replays at Table V's capacities") func exactCurveMatchesReplays()
        throws
    {
        let tables = try SharedTraces.paperTables()
        let rows = try #require(tables["table_V_P12"] as? [String: Any])
        let capacities = column(rows, "c").map { UInt64($0) }
        let published = column(rows, "LRU")
        let curve = ExactLRUCurve.compute(try SharedTraces.trace("arc/P12.lis.zst"), unit: .objects)
        for (capacity, expected) in zip(capacities, published) {
            #expect(
                abs(curve.hitRatio(at: capacity) * 100 - expected) <= 0.01,
                "curve at \(capacity): \(curve.hitRatio(at: capacity) * 100) vs \(expected)")
        }
    }

    @Test("SHARDS at rate 0.01 stays within 0.01 mean absolute error of the exact curve on P12") func shardsError()
        throws
    {
        let trace = try SharedTraces.trace("arc/P12.lis.zst")
        let exact = ExactLRUCurve.compute(trace, unit: .objects)
        let grid = CapacityTuner.grid(footprint: UInt64(trace.objectCount), points: 50)
        let sampled = SHARDS.compute(trace, unit: .objects, mode: .fixedRate(0.01))
        let error = sampled.meanAbsoluteError(against: exact.sampled(at: grid))
        #expect(error <= 0.01, "mean absolute error \(error)")
        let fixedSize = SHARDS.compute(trace, unit: .objects, mode: .fixedSize(maximumKeys: 8192))
        #expect(fixedSize.meanAbsoluteError(against: exact.sampled(at: grid)) <= 0.02)
    }
}
