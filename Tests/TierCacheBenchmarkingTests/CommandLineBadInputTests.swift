import DiskTestSupport
import Foundation
import Testing

/// The `tiercache` tool refuses options that once trapped it (a crash, not a message): the
/// process exits with a status and says what is wrong.
@Suite struct CommandLineBadInputTests {
    @Test(
        arguments: [
            (["bench", "--distribution", "scan:nan:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:inf:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:-inf:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:1e20:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:2.5:0.2"], "whole number of keys"),
            (["bench", "--duration", "1e16s"], "at most a year"),
            (["bench", "--duration", "1e300h"], "at most a year"),
            // Rounded to 0 ms, it was refused as not positive.
            (["bench", "--duration", "0.4ms"], "at least 1ms"),
            (["bench", "--rounds", "0"], "rounds must be from 1"),
            // Every round's requests are made up front: the product was never summed into a wrap.
            (["bench", "--rounds", "1000", "--requests", "2147483647"], "made up front"),
            // Accepted and ignored without a word: the synthetic workload's options with a trace,
            // a skew with a distribution that has none, the trace's options without a trace.
            (["bench", "--trace", "/nonexistent/trace.csv", "--keys", "10"], "--trace replays its own keys"),
            (["bench", "--trace", "/nonexistent/trace.csv", "--distribution", "uniform"], "--trace replays its own"),
            (["bench", "--distribution", "uniform", "--skew", "0.5"], "--distribution uniform has none"),
            (["bench", "--distribution", "hotspot", "--skew", "0.5"], "--distribution hotspot has none"),
            (["bench", "--format", "arc"], "are for --trace"),
            (["bench", "--no-trace-cache"], "are for --trace"),
            // A capacity or server for a tier none of the subjects has.
            (["bench", "--tiers", "lmdb", "--memory", "1GiB"], "--memory sizes a tier none of the subjects"),
            (["bench", "--tiers", "memory", "--disk-capacity", "1GiB"], "--disk-capacity sizes a tier none"),
            (["bench", "--redis-capacity", "1GiB"], "--redis-capacity sizes a tier none"),
            (["bench", "--tiers", "memory", "--redis", "redis://127.0.0.1"], "add redis to --tiers"),
            (["bench", "--tiers", "memory", "--memory", "0"], "--memory must be positive"),
            (["bench", "--tiers", "memory", "--directory", "/tmp"], "--directory holds the disk subjects' files"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-minimum-objects", "inf"], "from 1 to"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-minimum-objects", "1e19"], "from 1 to"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-minimum-objects", "nan"], "from 1 to"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--entry-overhead", "104"], "use it with --unit bytes"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--jobs", "0"], "--jobs must be positive"),
            // Full replays draw no miniature: the options were ignored without a word.
            (
                ["tune", "--trace", "/nonexistent/trace.csv", "--full-replays", "--miniature-rate", "0.1"],
                "drop --full-replays"
            ),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-rate", "0"], "--miniature-rate must be in"),
            // Below 2^-24 the samples were drawn at 2^-24, and the report named the rate asked for.
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-rate", "1e-9"], "--miniature-rate must be in"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--sample-rate", "1e-9"], "--sample-rate must be from"),
            // Nothing is replayed beside LRU's exact curve: the options were ignored without a word.
            (
                ["tune", "--trace", "/nonexistent/trace.csv", "--policy", "none", "--miniature-rate", "0.5"],
                "exact curve only"
            ),
            (["tune", "--trace", "/nonexistent/trace.csv", "--policy", "lru", "--full-replays"], "exact curve only"),
            (
                ["tune", "--trace", "/nonexistent/trace.csv", "--policy", "none", "--grid-points", "50"],
                "exact curve only"
            ),
            (["tune", "--trace", "/nonexistent/trace.csv", "--grid-points", "1"], "--grid-points must be from 2"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--policy", "lru", "--jobs", "2"], "exact curve only"),
            // The simulator numbers at most 2^31 - 1 requests: a larger limit is no limit.
            (["simulate", "--trace", "/nonexistent/trace.csv", "--limit", "3000000000"], "--limit is at most"),
            // An empty directory name put the copies at the file system's root.
            (["simulate", "--trace", "/nonexistent/trace.csv", "--trace-cache", ""], "names a directory"),
            // A table of 8 TB; values that no tier admits, built again on every lookup.
            (["demo", "--keys", "1000000000000"], "--keys is at most"),
            (["demo", "--value-size", "1000000000"], "larger than either tier admits"),
        ])
    func outOfRangeNumbersAreRefusedWithAMessage(_ arguments: [String], _ message: String) throws {
        // A trap ends the process by a signal, before any message.
        let (status, output) = try runTiercache(arguments)
        #expect(status != 0)
        #expect(output.contains(message), "\(output)")
    }

    /// A trace of comments alone once simulated to hit ratios of 0% and a footprint of "inf%".
    @Test(arguments: ["simulate", "tune"])
    func aTraceWithoutRequestsIsRefused(command: String) throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let path = directory.url.appendingPathComponent("empty.txt").path
        try Data("# no requests\n".utf8).write(to: URL(fileURLWithPath: path))
        let (status, output) = try runTiercache([command, "--trace", path, "--no-trace-cache"])
        // What the file holds is no usage error (status 64, the usage text after the message).
        #expect(status == 1)
        #expect(output.contains("holds no requests") && !output.contains("USAGE"), "\(output)")
    }

    /// `--value-size` sizes the objects of a trace without sizes; with a trace that carries its
    /// own, it was ignored without a word.
    @Test func aValueSizeForATraceWithSizesIsRefused() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        // oracleGeneral: per request a 32-bit time, a 64-bit id, a 32-bit size, a 64-bit next access.
        var bytes = Data()
        for id in 1...3 {
            withUnsafeBytes(of: UInt32(id).littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt64(id).littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: UInt32(100).littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: Int64(-1).littleEndian) { bytes.append(contentsOf: $0) }
        }
        let path = directory.url.appendingPathComponent("sized.oracleGeneral.bin").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let (status, output) = try runTiercache([
            "bench", "--trace", path, "--no-trace-cache", "--value-size", "1KiB", "--tiers", "memory",
        ])
        // What the trace turned out to hold is no usage error (status 64, with the usage text).
        #expect(status == 1)
        #expect(output.contains("carries its own") && !output.contains("Usage:"), "\(output)")
    }

    /// A directory given as a CSV trace was said to be "a pipe or device".
    @Test func aDirectoryGivenAsATraceIsNamedSo() throws {
        let directory = TemporaryDirectory()
        let named = directory.url.appendingPathComponent("trace.csv")
        try FileManager.default.createDirectory(at: named, withIntermediateDirectories: true)
        let (status, output) = try runTiercache(["simulate", "--trace", named.path, "--no-trace-cache"])
        #expect(status == 1)
        #expect(output.contains("Is a directory") && !output.contains("pipe or device"), "\(output)")
    }

    /// A report directory that cannot be written is refused before the run, not after it.
    @Test func anUnwritableOutputIsRefusedBeforeTheRun() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = directory.url.appendingPathComponent("a-file")
        try Data("x".utf8).write(to: file)
        // A run of a year: refused at once, or the test never ends.
        let (status, output) = try runTiercache([
            "bench", "--tiers", "memory", "--duration", "8760h", "--output",
            file.appendingPathComponent("reports").path,
        ])
        #expect(status == 64)
        #expect(output.contains("--output"), "\(output)")
    }

    /// `tune --unit bytes` ends with the memory tier to configure when `--entry-overhead` says what
    /// the tier charges beyond the values, and otherwise with what to give for it.
    @Test func tuneInBytesPrintsTheMemoryTierCountingItsOverhead() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let path = directory.url.appendingPathComponent("sized.csv").path
        let lines = (0..<3_000).map { "\($0 * 7919 % 400),400" }
        try Data(("key,size\n" + lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        func capacity(overhead: Int) throws -> String {
            let (status, output) = try runTiercache([
                "tune", "--trace", path, "--no-trace-cache", "--unit", "bytes", "--policy", "none",
                "--target-hit-ratio", "0.5", "--entry-overhead", "\(overhead)",
            ])
            #expect(status == 0, "\(output)")
            let line = try #require(output.split(separator: "\n").last { $0.hasPrefix("Memory tier: ") }, "\(output)")
            return String(line)
        }
        // Without the overhead no capacity is named: it would hold fewer entries than simulated.
        let values = try capacity(overhead: 0)
        let charged = try capacity(overhead: 104)
        #expect(values.contains("give --entry-overhead") && !values.contains("MemoryTier("), "\(values)")
        #expect(charged.contains("104 bytes an entry") && charged.contains("policy: .lru"), "\(charged)")
        // The saved report says its footprint and capacities count the overhead (they did
        // without a word).
        let reports = directory.url.appendingPathComponent("reports")
        let (status, output) = try runTiercache([
            "tune", "--trace", path, "--no-trace-cache", "--unit", "bytes", "--policy", "none",
            "--entry-overhead", "104", "--output", reports.path,
        ])
        #expect(status == 0, "\(output)")
        #expect(output.contains("with 104 B added to each object"), "\(output)")
        let json = try FileManager.default.contentsOfDirectory(atPath: reports.path).filter { $0.hasSuffix(".json") }
        let document = try String(contentsOf: reports.appendingPathComponent(try #require(json.first)), encoding: .utf8)
        #expect(document.contains("\"entryOverheadBytes\" : 104"), "\(document.prefix(600))")
    }

    /// A hotspot over one key once drew key 1 of 1 and trapped indexing the value sizes.
    @Test func aHotspotOverOneKeyRuns() throws {
        let (status, output) = try runTiercache([
            "bench", "--tiers", "memory", "--keys", "1", "--distribution", "hotspot", "--requests", "500", "--tasks",
            "1", "--no-baselines",
        ])
        #expect(status == 0, "\(output)")
    }
}
