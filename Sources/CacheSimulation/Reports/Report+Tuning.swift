extension Report {
    /// The report of `tiercache tune`: curves per policy, the target line, and recommendations.
    public static func tuning(trace: Trace, result: CapacityTuner.Result, seconds: Double) -> Report {
        let unit = result.unit
        let formatCapacity = ChartFormat.capacity(in: unit)
        let footprint = Double(max(result.footprint, 1))
        let rows = result.curves.map { curve -> [String] in
            let target =
                curve.capacityForTarget.map {
                    "\(ChartFormat.exactCapacity($0, in: unit)) (\(ChartFormat.percent(Double($0) / footprint)))"
                } ?? "not reached"
            let knee =
                curve.knee.map {
                    "\(ChartFormat.exactCapacity($0.capacity, in: unit)) → \(ChartFormat.percent($0.hitRatio))"
                } ?? "—"
            let time =
                ChartFormat.fixed(curve.seconds, digits: 2) + " s"
                + (curve.refiningSeconds.map { " + " + ChartFormat.fixed($0, digits: 2) + " s refining" } ?? "")
            let error = curve.errorAgainstFullReplays.map { ChartFormat.fixed($0, digits: 4) } ?? "—"
            return [curve.policy, target, knee, curve.method, time, error]
        }
        let chart = LineChart(
            title: "Hit ratio by capacity — \(trace.name)", xLabel: "capacity (\(unit))", yLabel: "hit ratio",
            logarithmicX: true,
            series: result.curves.map { curve in
                LineChart.Series(
                    name: curve.policy, points: Self.plotted(curve.curve).map { (Double($0.capacity), $0.hitRatio) },
                    stepped: curve.method.hasPrefix("exact") || curve.method.hasPrefix("SHARDS"))
            },
            guides: [
                (result.targetHitRatio, "target \(ChartFormat.percent(result.targetHitRatio))"),
                (result.compulsoryHitRatio, "best possible \(ChartFormat.percent(result.compulsoryHitRatio))"),
            ],
            formatX: formatCapacity)
        var summary = trace.summaryLines(unit: unit)
        summary.append(("Target hit ratio", ChartFormat.percent(result.targetHitRatio)))
        summary.append(("Best possible (compulsory misses only)", ChartFormat.percent(result.compulsoryHitRatio)))
        if let error = result.samplingError {
            summary.append(("SHARDS mean absolute error", ChartFormat.fixed(error, digits: 4)))
        }
        summary.append(("Run time", ChartFormat.fixed(seconds, digits: 2) + " s"))
        return Report(
            title: "TierCache capacity tuning: \(trace.name)",
            summary: summary,
            tables: [
                Table(
                    title: "Recommendations",
                    columns: [
                        "policy", "smallest capacity reaching the target", "knee", "curve from", "time",
                        "mean abs. error vs full replays",
                    ], rows: rows)
            ],
            charts: [.lines(chart)],
            json: encodeJSON(result))
    }

    /// An exact curve can have one point per distinct distance (millions); a chart needs a few hundred.
    private static func plotted(_ curve: MissRatioCurve) -> [MissRatioCurve.Point] {
        guard curve.points.count > 400, let first = curve.points.first, let last = curve.points.last else {
            return curve.points
        }
        let grid = CapacityTuner.grid(footprint: last.capacity, points: 300).filter { $0 >= first.capacity }
        return curve.sampled(at: grid).points + [last]
    }
}
