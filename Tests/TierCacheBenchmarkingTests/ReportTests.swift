import CacheSimulation
import Foundation
import Testing

@testable import TierCacheBenchmarking

/// The reports contain what the run measured, in every format.
@Suite struct ReportTests {
    /// More tasks than processors: the summary says the tasks of a local tier ran a processor's
    /// worth at a time.
    @Test func moreTasksThanProcessorsIsNoted() async throws {
        let plan = BenchmarkPlan(workload: Workload.zipf(keys: 100), length: .requests(500), tasks: [1, 3])
        var results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20)])
        results.processors = 2
        #expect(results.report().summary.contains { $0.0 == "Note" && $0.1.hasPrefix("3 tasks on 2 processors") })
        results.processors = 3
        #expect(!results.report().summary.contains { $0.0 == "Note" })
    }

    @Test func everyFormatCarriesTheRunsFigures() async throws {
        let plan = BenchmarkPlan(
            workload: Workload.zipf(keys: 1_000, sizes: .fixed(128)), length: .requests(4_000), tasks: [1, 2])
        let results = try await BenchmarkRunner(plan: plan).run([.memory(capacity: 1 << 20, policy: .s3fifo)])
        let report = results.report()
        let table = report.tables[0]
        let row = try #require(table.rows.first { $0[0] == "memory-s3fifo" && $0[1] == "1" })
        let result = try #require(results.result("memory-s3fifo", tasks: 1))
        #expect(row[2] == ChartFormat.compact(result.throughput))
        #expect(row[4] == ChartFormat.percent(result.hitRatio))
        // The median ratio, then the rounds' range: "1.02× (0.97–1.10)".
        #expect(
            row[3].hasPrefix(ChartFormat.fixed(try #require(results.throughputRatio(of: result)), digits: 2) + "× ("))
        #expect(table.csv.contains("memory-s3fifo"))
        let decoded = try JSONDecoder().decode(BenchmarkResults.self, from: Data(report.json.utf8))
        #expect(decoded == results)
        // A result written before refused and failed stores were counted still loads.
        let encoded = try JSONEncoder().encode(result)
        var older = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        older["refusedStores"] = nil
        older["failedStores"] = nil
        let loaded = try JSONDecoder().decode(
            SubjectResult.self, from: try JSONSerialization.data(withJSONObject: older))
        #expect(loaded == result && loaded.refusedStores == 0)
        let titles = report.charts.map(\.title)
        #expect(titles.contains("Throughput against concurrency"))
        #expect(titles.contains { $0.hasPrefix("Latency CDF") })
        #expect(titles.contains("Hit ratio over time"))
        let html = HTMLReport.render(report)
        #expect(html.contains("memory-s3fifo") && html.contains("<svg") && html.contains("Latency CDF"))
        // Every point is drawn inside its chart (requests per second on a 0–100% axis were drawn
        // hundreds of millions of pixels above it).
        for chart in report.charts {
            let coordinates = Self.pointCoordinates(in: chart.svg)
            #expect(!coordinates.isEmpty, "\(chart.title) draws no points")
            #expect(coordinates.allSatisfy { (0...720).contains($0) }, "\(chart.title): \(coordinates.max() ?? 0)")
        }
    }

    /// The `cx` and `cy` of every circle an SVG document draws.
    static func pointCoordinates(in svg: String) -> [Double] {
        var values: [Double] = []
        for attribute in [" cx=\"", " cy=\""] {
            var rest = Substring(svg)
            while let start = rest.range(of: attribute) {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { break }
                if let value = Double(rest[..<end]) { values.append(value) }
            }
        }
        return values
    }
}
