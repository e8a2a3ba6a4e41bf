import ArgumentParser
import CacheSimulation
import Foundation
import TierCache

/// `tiercache simulate`: replay a trace through eviction policies at several capacities.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Replay a trace through eviction policies and report hit ratios.",
        discussion: """
            Capacities: a percentage of the footprint (10%), a number of objects (50000) or a size (64MiB, byte mode).
            Policies: \(PolicyKind.allCases.map(\.rawValue).joined(separator: ", ")).
            Example: tiercache simulate --trace OLTP.lis.zst --policy lru,arc,s3-fifo,lirs,2q --capacity 1000,5000,1%
            """)

    @OptionGroup var traceOptions: TraceOptions

    @Option(help: "Policies, comma-separated (or \"all\").")
    var policy = "lru,fifo,clock,sieve,s3-fifo,arc,w-tinylfu,lirs,2q"

    @Option(help: "Capacities, comma-separated.")
    var capacity = "1%,10%"

    @Option(help: "What a capacity counts: objects or bytes (default: bytes when a capacity has a byte unit).")
    var unit: CapacityUnit?

    @Option(help: "Replays to run at once (default: one per core this process may use).")
    var jobs = Simulator.defaultParallelism

    @OptionGroup var reportOptions: ReportOptions

    func validate() throws {
        _ = try Self.policies(policy)
        _ = try Self.capacities(capacity, unit: unit)
        guard jobs > 0 else { throw ValidationError("--jobs must be positive") }
    }

    static func policies(_ text: String) throws -> [SimulatedPolicy] {
        if text.lowercased() == "all" { return PolicyKind.allCases.map(SimulatedPolicy.init) }
        let kinds = try text.split(separator: ",").map { name in
            guard let kind = PolicyKind(name: String(name)) else {
                throw ValidationError(
                    "unknown policy \"\(name)\"; use \(PolicyKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        guard !kinds.isEmpty else { throw ValidationError("name at least one policy") }
        // Two spellings of one policy (`2q,twoq`) would replay it twice and draw it twice.
        var seen = Set<PolicyKind>()
        return kinds.filter { seen.insert($0).inserted }.map(SimulatedPolicy.init)
    }

    static func capacities(
        _ text: String, unit: CapacityUnit?
    ) throws -> (specs: [CapacitySpecification], unit: CapacityUnit) {
        let specs: [CapacitySpecification]
        do { specs = try CapacitySpecification.parseList(text) } catch { throw ValidationError(error.description) }
        let implied = Set(specs.compactMap(\.impliedUnit))
        guard implied.count <= 1 else {
            throw ValidationError(
                "--capacity mixes object counts and byte sizes; use one kind (percentages go with either)")
        }
        let resolved = unit ?? implied.first ?? .objects
        if let implied = implied.first, implied != resolved {
            throw ValidationError("--capacity is in \(implied) but --unit is \(resolved)")
        }
        return (specs, resolved)
    }

    func run() throws {
        let kinds = try Self.policies(policy)
        let (specs, unit) = try Self.capacities(capacity, unit: unit)
        let trace = try traceOptions.load()
        let simulator: Simulator
        do { simulator = try Simulator(trace: trace, unit: unit) } catch { throw CommandFailure(error.description) }
        let capacities = specs.map { $0.resolve(for: trace, unit: unit) }
        print(
            "\(trace.name): \(trace.requestCount) requests, \(trace.objectCount) objects\(trace.hasSizes ? ", footprint \(ByteCount.format(Int(clamping: trace.footprintBytes)))" : ""); capacity in \(unit)"
        )
        let progress = ProgressBar(label: "replaying")
        let start = ContinuousClock.now
        let results = simulator.replay(policies: kinds, capacities: capacities, parallelism: jobs) { done, total in
            progress.update(Double(done) / Double(total), detail: "\(done)/\(total)")
        }
        progress.finish()
        let elapsed = ContinuousClock.now - start
        let report = Report.simulation(
            trace: trace, unit: unit, results: results,
            seconds: elapsed.inSeconds)
        print(report.tables[0].text)
        try reportOptions.write(report, baseName: "simulate-" + Self.baseName(trace.name))
    }

    /// The reports' name for a trace: its file name without a compression suffix, dots made
    /// dashes (`cloudPhysicsIO.csv.zst` → `cloudPhysicsIO-csv`), so that two traces of one
    /// workload in different formats do not overwrite each other's reports.
    static func baseName(_ traceName: String) -> String {
        var name = Substring(traceName)
        for suffix in [".zst", ".gz", ".xz"] where name.hasSuffix(suffix) { name = name.dropLast(suffix.count) }
        return String(name.map { $0 == "." ? "-" : $0 })
    }
}
