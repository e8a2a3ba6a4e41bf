import Foundation
import Testing

@testable import CacheSimulation

/// The simulate and tune reports name LIRS and 2Q like every other policy.
@Suite struct LIRSAnd2QReportTests {
    /// 97 keys cycled ten times: enough for every capacity below to evict.
    private func cycle() throws -> Trace {
        try Trace(name: "cycle", requests: (0..<970).map { TraceRequest(key: UInt64($0 % 97)) })
    }

    @Test func simulationReportListsTheNewPolicies() throws {
        let trace = try cycle()
        let simulator = try Simulator(trace: trace, unit: .objects)
        let results = simulator.replay(policies: [.lru, .lirs, .twoQ], capacities: [10, 50], parallelism: 2)
        let report = Report.simulation(trace: trace, unit: .objects, results: results, seconds: 0.1)
        let csv = try #require(report.tables.first?.csv)
        #expect(csv.contains("\nLIRS,10,") && csv.contains("\n2Q,50,"))
        let svg = try #require(report.charts.first?.svg)
        #expect(svg.contains(">LIRS<") && svg.contains(">2Q<"))
        #expect(HTMLReport.render(report).contains("<td>2Q</td>"))
        let json = try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any]
        let policies = (json?["results"] as? [[String: Any]])?.compactMap { $0["policy"] as? String } ?? []
        #expect(policies == ["LRU", "LRU", "LIRS", "LIRS", "2Q", "2Q"])
    }

    @Test func tuningReportListsTheNewPolicies() throws {
        let trace = try cycle()
        let tuner = CapacityTuner(options: .init(policies: [.lirs, .twoQ], gridPoints: 4, parallelism: 2))
        let result = try tuner.tune(trace)
        #expect(result.curves.map(\.policy).contains("LIRS") && result.curves.map(\.policy).contains("2Q"))
        let report = Report.tuning(trace: trace, result: result, seconds: 0.1)
        #expect(report.tables.first?.rows.map { $0[0] }.contains("LIRS") == true)
    }
}
