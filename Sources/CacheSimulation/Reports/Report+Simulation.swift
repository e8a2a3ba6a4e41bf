import Foundation
import TierCache

extension Report {
    /// The report of `tiercache simulate`: hit ratios per policy and capacity.
    public static func simulation(
        trace: Trace, unit: CapacityUnit, results: [SimulationResult], seconds: Double
    ) -> Report {
        let footprint = unit == .bytes ? Double(trace.footprintBytes) : Double(trace.objectCount)
        let formatCapacity = ChartFormat.capacity(in: unit)
        let rows = results.map { result in
            [
                result.policy, ChartFormat.exactCapacity(result.capacity, in: unit),
                footprint > 0 ? ChartFormat.percent(Double(result.capacity) / footprint) : "-",
                // In object mode a request counts as one byte (see `SimulationResult.byteHitRatio`):
                // the column would repeat the hit ratio under another name.
                ChartFormat.percent(result.hitRatio), unit == .bytes ? ChartFormat.percent(result.byteHitRatio) : "-",
                ChartFormat.compact(result.requestsPerSecond),
            ]
        }
        let policies = results.reduce(into: [String]()) { names, result in
            if !names.contains(result.policy) { names.append(result.policy) }
        }
        let capacities = results.map(\.capacity)
        let spread = Double(capacities.max() ?? 1) / Double(max(capacities.min() ?? 1, 1))
        let chart = LineChart(
            title: "Hit ratio by capacity — \(trace.name)", xLabel: "capacity (\(unit))", yLabel: "hit ratio",
            logarithmicX: spread >= 20,
            series: policies.map { policy in
                LineChart.Series(
                    name: policy,
                    points: results.filter { $0.policy == policy }.map { (Double($0.capacity), $0.hitRatio) })
            },
            formatX: formatCapacity)
        struct Payload: Encodable {
            let trace: TraceSummary
            let results: [SimulationResult]
        }
        return Report(
            title: "TierCache simulation: \(trace.name)",
            summary: trace.summaryLines(unit: unit) + [("Replay time", ChartFormat.fixed(seconds, digits: 2) + " s")],
            tables: [
                Table(
                    title: "Results",
                    columns: ["policy", "capacity", "of footprint", "hit ratio", "byte hit ratio", "requests/s"],
                    rows: rows)
            ],
            charts: [.lines(chart)],
            json: encodeJSON(Payload(trace: TraceSummary(trace), results: results)))
    }
}

/// The facts about a trace that every report states.
public struct TraceSummary: Sendable, Codable {
    /// The trace's name (its file name).
    public var name: String
    /// The number of requests.
    public var requests: Int
    /// The number of distinct objects.
    public var objects: Int
    /// The sum of all objects' sizes.
    public var footprintBytes: UInt64
    /// Whether the trace gives object sizes.
    public var hasSizes: Bool
    /// How the trace was loaded and how long that took (apart from the replays).
    public var loading: Trace.Loading?
    /// Bytes added to every object's size (`tiercache tune --entry-overhead`), which
    /// ``footprintBytes`` and byte capacities count; absent for the trace's own sizes.
    public var entryOverheadBytes: UInt32?

    /// The facts of `trace`.
    public init(_ trace: Trace) {
        name = trace.name
        requests = trace.requestCount
        objects = trace.objectCount
        footprintBytes = trace.footprintBytes
        hasSizes = trace.hasSizes
        loading = trace.loading
        entryOverheadBytes = trace.entryOverhead > 0 ? trace.entryOverhead : nil
    }
}

extension Trace {
    func summaryLines(unit: CapacityUnit) -> [(String, String)] {
        var lines = [("Trace", name), ("Requests", "\(requestCount)"), ("Distinct objects", "\(objectCount)")]
        if hasSizes {
            let footprint = ByteCount.format(Int(clamping: footprintBytes))
            // Sizes with an entry overhead added: the footprint and every byte capacity count it.
            lines.append(
                (
                    "Footprint",
                    entryOverhead > 0 ? "\(footprint), with \(entryOverhead) B added to each object" : footprint
                ))
        }
        lines.append(("Capacity unit", unit.rawValue))
        if let loading { lines.append(("Load time", loading.summary)) }
        return lines
    }
}

extension Report {
    /// Pretty, key-sorted JSON for a report's payload; an encoding failure becomes a JSON error
    /// object rather than a crash.
    public static func jsonDocument(_ value: some Encodable) -> String {
        encodeJSON(value)
    }
}

/// Pretty, key-sorted JSON; an encoding failure becomes a JSON error object rather than a crash.
func encodeJSON(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    // JSON has no NaN or infinity: a figure a caller's data made one is written as a string
    // rather than losing the whole payload.
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
        positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    do {
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    } catch {
        // Escaped as JSON, by the encoder: a dictionary of strings always encodes.
        let message = (try? encoder.encode(["error": String(describing: error)])) ?? Data("{}".utf8)
        return String(decoding: message, as: UTF8.self) + "\n"
    }
}

extension Trace.Loading {
    /// "1.84 s (parsed)" or "0.03 s (binary copy)", for report summaries and the command line.
    public var summary: String {
        ChartFormat.fixed(seconds, digits: 2) + " s (" + source.rawValue + (storeFailure.map { "; \($0)" } ?? "") + ")"
    }
}
