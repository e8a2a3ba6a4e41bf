import CacheSimulation
import TierCache

extension BenchmarkResults {
    /// The run as a report: the terminal tables, CSV (the first table), JSON (everything), and
    /// the HTML page's charts: throughput against concurrency (or per subject, with one
    /// concurrency), a latency CDF per subject, and the hit ratio over time.
    public func report(title: String = "TierCache benchmark") -> Report {
        Report(
            title: title,
            summary: [
                ("Workload", workload), ("Measured", length), ("Warm-up", warmUp),
                ("Tasks", concurrencies.map(String.init).joined(separator: ", ")), ("Processors", "\(processors)"),
            ] + oversubscription,
            tables: [mainTable, tierTable], charts: charts, json: Report.jsonDocument(self))
    }

    /// A note when a concurrency exceeds the processors: a local tier's tasks never suspend, so
    /// Swift's pool (a thread per processor) runs them a processor's worth at a time, one group
    /// after another. Such a row measures throughput at the processors' concurrency, not lock
    /// contention among that many tasks, and its timeline merges windows run at different times.
    private var oversubscription: [(String, String)] {
        guard processors > 0, let most = concurrencies.max(), most > processors else { return [] }
        return [
            (
                "Note",
                "\(most) tasks on \(processors) processors: local tiers' tasks, which never suspend, run \(processors) at a time"
            )
        ]
    }

    private var concurrencies: [Int] {
        results.reduce(into: [Int]()) { if !$0.contains($1.tasks) { $0.append($1.tasks) } }
    }

    private var subjects: [String] {
        results.reduce(into: [String]()) { if !$0.contains($1.subject) { $0.append($1.subject) } }
    }

    private var mainTable: Report.Table {
        let percentiles = LatencySummary.reported.map(\.name).filter { $0 != "max" }
        return Report.Table(
            title: "Throughput and latency",
            columns: ["subject", "tasks", "requests/s", "vs baseline", "hit ratio", "byte hit ratio"]
                + percentiles.map { "\($0) µs" } + ["resident", "on disk", "status"],
            rows: results.map { result in
                let ratio = throughputRatio(of: result).map { ratioText($0, rounds: result.roundRatios ?? []) }
                // A run without reads (a write-only mix) has no hit ratio, not one of 0%.
                let hitRatios: [String] =
                    result.reads > 0
                    ? [ChartFormat.percent(result.hitRatio), ChartFormat.percent(result.byteHitRatio)] : ["-", "-"]
                let leading: [String] = [
                    result.subject, "\(result.tasks)", ChartFormat.compact(result.throughput),
                    ratio ?? (result.isBaseline ? "baseline" : "-"),
                ]
                return leading + hitRatios
                    + percentiles.map { name in
                        result.latency.percentiles[name].map { ChartFormat.fixed(Double($0) / 1000, digits: 1) } ?? "-"
                    }
                    + [
                        result.residentBytes.map(ByteCount.format) ?? "-",
                        result.diskBytes.map(ByteCount.format) ?? "-",
                        result.status,
                    ]
            })
    }

    /// A ratio, and with several rounds the range of theirs: `0.96× (0.91–1.02)`.
    private func ratioText(_ ratio: Double, rounds: [Double]) -> String {
        let text = ChartFormat.fixed(ratio, digits: 2) + "×"
        guard rounds.count > 1, let lowest = rounds.min(), let highest = rounds.max() else { return text }
        return text + " (\(ChartFormat.fixed(lowest, digits: 2))–\(ChartFormat.fixed(highest, digits: 2)))"
    }

    private var tierTable: Report.Table {
        Report.Table(
            title: "Tiers (counters over the measured phase)",
            columns: [
                "subject", "tasks", "tier", "hits", "misses", "hit ratio", "stores", "evictions", "refused", "errors",
                "in use",
            ],
            rows: results.flatMap { result in
                result.tiers.map { tier in
                    let lookups = tier.hits + tier.misses
                    return [
                        result.subject, "\(result.tasks)", tier.name, "\(tier.hits)", "\(tier.misses)",
                        lookups > 0 ? ChartFormat.percent(Double(tier.hits) / Double(lookups)) : "-",
                        "\(tier.stores)", "\(tier.evictions)", "\(tier.refused)", "\(tier.errors)",
                        tier.bytesInUse.map(ByteCount.format) ?? "-",
                    ]
                }
            })
    }

    private var charts: [Chart] {
        let succeeded = results.filter { $0.failure == nil }
        var charts: [Chart] = []
        if concurrencies.count > 1 {
            charts.append(
                .lines(
                    LineChart(
                        title: "Throughput against concurrency", xLabel: "tasks", yLabel: "requests/s",
                        logarithmicX: true,
                        series: subjects.map { subject in
                            LineChart.Series(
                                name: subject,
                                points: succeeded.filter { $0.subject == subject }.map {
                                    (Double($0.tasks), $0.throughput)
                                })
                        }, yAxis: .value, formatX: { ChartFormat.fixed($0, digits: 0) })))
        } else {
            charts.append(
                .bars(
                    BarChart(
                        title: "Throughput per subject", yLabel: "requests/s",
                        bars: succeeded.map { ($0.subject, $0.throughput) })))
        }
        // One line per subject, at the run's first concurrency (the sweep's other points are in
        // the JSON): the latency CDF and the hit ratio over time.
        let first = succeeded.filter { $0.tasks == concurrencies.first }
        charts.append(
            .lines(
                LineChart(
                    title: "Latency CDF (\(concurrencies.first ?? 1) task\(concurrencies.first == 1 ? "" : "s"))",
                    xLabel: "latency (µs)", yLabel: "share of requests at or below", logarithmicX: true,
                    series: first.map { result in
                        LineChart.Series(
                            name: result.subject,
                            points: result.latency.distribution.map {
                                (max(Double($0.nanoseconds) / 1000, 0.01), $0.percentile / 100)
                            })
                    }, formatX: { ChartFormat.compact($0) })))
        charts.append(
            .lines(
                LineChart(
                    title: "Hit ratio over time", xLabel: "measured requests", yLabel: "hit ratio",
                    logarithmicX: false,
                    series: first.filter { !$0.hitRatioTimeline.isEmpty }.map { result in
                        LineChart.Series(
                            name: result.subject,
                            points: result.hitRatioTimeline.map { (Double($0.requests), $0.hitRatio) })
                    })))
        return charts
    }
}
