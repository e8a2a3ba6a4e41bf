import ArgumentParser
import CacheSimulation
import Foundation
import Histogram
import TierCache
import TierCacheLMDB

/// `tiercache bench`: the README's main job. Drives the real tiers with a read-through workload and
/// reports throughput, hit ratios and latency percentiles.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark the real tiers (memory, LMDB, memory over LMDB) with a Zipf workload or a trace.",
        discussion: """
            Every lookup that misses stores the value (read-through), as an application would. Each subject runs the same \
            requests, split across --tasks concurrent tasks. With no arguments: memory over LMDB in a temporary directory, \
            about half a minute on two cores.
            """)

    enum Subject: String, CaseIterable, ExpressibleByArgument {
        case memory, lmdb, tiered
    }

    @Option(help: "Subjects, comma-separated: memory, lmdb, tiered (memory over LMDB).")
    var tiers = "memory,lmdb,tiered"
    @Option(help: "A trace to replay instead of the Zipf workload (formats as for simulate).")
    var trace: String?
    @Option(help: "The trace's format (default: guessed from its name).")
    var format: String?
    @Option(help: "Distinct keys of the Zipf workload.")
    var keys = 100_000
    @Option(help: "Zipf skew (0 is uniform; 0.8-1.0 is typical of web traffic).")
    var skew = 0.99
    @Option(help: "Requests per subject (a trace is cut or repeated to this length).")
    var requests = 200_000
    @Option(help: "Value sizes in bytes, MIN-MAX (uniform per key) or one size.")
    var valueSize = "256-4096"
    @Option(help: "Concurrent tasks issuing requests.")
    var tasks = 2
    @Option(help: "Memory tier capacity.", transform: ByteCount.init(parsing:))
    var memory = ByteCount(bytes: 16 << 20)
    @Option(help: "LMDB tier capacity.", transform: ByteCount.init(parsing:))
    var diskCapacity = ByteCount(bytes: 256 << 20)
    @Option(help: "Directory for the LMDB tier (default: a temporary directory, deleted afterwards).")
    var directory: String?
    @OptionGroup var reportOptions: ReportOptions

    func validate() throws {
        _ = try subjects()
        _ = try sizeRange()
        guard keys > 0, requests > 0 else { throw ValidationError("--keys and --requests must be positive") }
        guard tasks > 0, tasks <= 256 else { throw ValidationError("--tasks must be from 1 to 256") }
        guard skew >= 0, skew.isFinite else { throw ValidationError("--skew must be zero or positive") }
    }

    func subjects() throws -> [Subject] {
        try tiers.split(separator: ",").map { name in
            guard let subject = Subject(rawValue: String(name)) else {
                throw ValidationError("unknown tier \"\(name)\"; use memory, lmdb or tiered")
            }
            return subject
        }
    }

    func sizeRange() throws -> ClosedRange<Int> {
        let parts = valueSize.split(separator: "-").map { Int($0) }
        guard (1...2).contains(parts.count), parts.allSatisfy({ ($0 ?? 0) > 0 }), let low = parts.first ?? nil,
            let high = parts.last ?? nil, low <= high,
            high <= 1 << 20
        else {
            throw ValidationError("--value-size must be SIZE or MIN-MAX in bytes, at most 1 MiB")
        }
        return low...high
    }

    func run() async throws {
        let workload: BenchWorkload
        if let trace {
            let loaded = try TraceOptions.parse(["--trace", trace] + (format.map { ["--format", $0] } ?? [])).load()
            workload = BenchWorkload.trace(loaded, defaultSize: try sizeRange().upperBound)
        } else {
            workload = BenchWorkload.zipf(keys: keys, skew: skew, requests: requests, sizes: try sizeRange(), seed: 42)
        }
        print("tiercache bench: \(workload.description); \(requests) requests per subject over \(tasks) tasks")
        print("memory \(memory), LMDB \(diskCapacity) (\(directory ?? "temporary directory"))\n")
        var outcomes: [BenchOutcome] = []
        for subject in try subjects() {
            let outcome = try await BenchRunner(
                subject: subject, workload: workload, requests: requests, tasks: tasks,
                memory: memory.bytes, disk: diskCapacity.bytes, directory: directory
            ).run()
            outcomes.append(outcome)
        }
        let report = Report.bench(workload: workload.description, tasks: tasks, outcomes: outcomes)
        print(report.tables[0].text)
        if report.tables.count > 1 {
            print("")
            print(report.tables[1].text)
        }
        try reportOptions.write(report, baseName: "bench")
    }
}
