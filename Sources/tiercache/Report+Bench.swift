import CacheSimulation
import Foundation
import TierCache

extension Report {
    /// The report of `tiercache bench`: throughput and latency per subject, and each tier's counters.
    static func bench(workload: String, tasks: Int, outcomes: [BenchOutcome]) -> Report {
        let percentiles = BenchRunner.percentiles.map(\.0)
        let main = Table(
            title: "Throughput and latency",
            columns: ["subject", "requests/s", "hit ratio"] + percentiles.map { "\($0) µs" } + ["time"],
            rows: outcomes.map { outcome in
                [
                    outcome.subject, ChartFormat.compact(outcome.requestsPerSecond),
                    ChartFormat.percent(outcome.hitRatio),
                ]
                    + percentiles.map {
                        ChartFormat.fixed(Double(outcome.latencyNanoseconds[$0] ?? 0) / 1000, digits: 1)
                    }
                    + [ChartFormat.fixed(outcome.seconds, digits: 2) + " s"]
            })
        let tiers = Table(
            title: "Tiers",
            columns: ["subject", "tier", "hits", "misses", "hit ratio", "stores", "evictions", "refused", "in use"],
            rows: outcomes.flatMap { outcome in
                outcome.tiers.map { tier in
                    let lookups = tier.hits + tier.misses
                    return [
                        outcome.subject, tier.name, "\(tier.hits)", "\(tier.misses)",
                        lookups > 0 ? ChartFormat.percent(Double(tier.hits) / Double(lookups)) : "-",
                        "\(tier.stores)", "\(tier.evictions)", "\(tier.refused)",
                        tier.bytesInUse.map { ByteCount.format(Int(clamping: $0)) } ?? "-",
                    ]
                }
            })
        struct Payload: Encodable {
            let workload: String
            let tasks: Int
            let outcomes: [BenchOutcome]
        }
        let json = Report.jsonDocument(Payload(workload: workload, tasks: tasks, outcomes: outcomes))
        return Report(
            title: "TierCache bench",
            summary: [
                ("Workload", workload), ("Tasks", "\(tasks)"),
                ("Processors", "\(ProcessInfo.processInfo.activeProcessorCount)"),
            ],
            tables: [main, tiers],
            charts: [
                .bars(
                    BarChart(
                        title: "Throughput per subject", yLabel: "requests/s",
                        bars: outcomes.map { ($0.subject, $0.requestsPerSecond) })),
                .bars(
                    BarChart(
                        title: "p99 latency per subject (µs)", yLabel: "µs",
                        bars: outcomes.map { ($0.subject, Double($0.latencyNanoseconds["p99"] ?? 0) / 1000) })),
            ],
            json: json)
    }
}
