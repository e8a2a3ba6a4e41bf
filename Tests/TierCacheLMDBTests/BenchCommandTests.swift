import DiskTestSupport
import Foundation
import Testing

/// `tiercache bench`, the README's main job, end to end: the subjects it names run beside their
/// baselines and the files it writes hold the run; bad options are refused with a message.
@Suite("tiercache bench")
struct BenchCommandTests {
    @Test("Runs the named subjects beside their baselines and writes every report format")
    func runsAndReports() throws {
        let output = TemporaryDirectory()
        let (status, text) = try runTiercache([
            "bench", "--tiers", "memory-s3fifo,lmdb-dictionary,tiered", "--keys", "2000", "--requests", "4000",
            "--tasks", "1,2", "--mix", "90:9:1", "--value-size", "100-2000", "--output", output.url.path,
        ])
        #expect(status == 0, "\(text)")
        for subject in [
            "memory-s3fifo", "lmdb-dictionary", "memory+lmdb", "minimal LRU 16 MiB", "raw LMDB+zstd 256 MiB",
        ] {
            #expect(text.contains(subject), "\(subject) in the table")
        }
        #expect(text.contains("×"), "ratios to the baselines")
        let files = try FileManager.default.contentsOfDirectory(atPath: output.url.path)
        #expect(Set(files).isSuperset(of: ["bench.csv", "bench.json", "bench.html"]))
        let json = try String(contentsOf: output.url.appendingPathComponent("bench.json"), encoding: .utf8)
        #expect(json.contains("\"subject\" : \"memory-s3fifo\"") && json.contains("\"tasks\" : 2"))
    }

    /// Killed outright, an interrupted run left its subjects' store files behind (256 MiB of
    /// LMDB each, by default, in the temporary directory); a closed pipe (`bench | head`) killed
    /// it the same way.
    @Test(
        "An interrupted run stops, removes its files and exits as the signal would",
        arguments: [SIGINT, SIGTERM, SIGPIPE])
    func interruption(signal number: Int32) throws {
        let scratch = TemporaryDirectory()
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = try tiercacheExecutable()
        // Ten measurements of three 2 s rounds each: the signal comes after the first, and a run
        // that went on to its end would take 54 s more.
        process.arguments = [
            "bench", "--tiers", "lmdb", "--no-baselines", "--duration", "2s", "--tasks", "1,1,1,1,1,1,1,1,1,1",
            "--directory", scratch.url.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("lmdb, 1 task: ") {
            let data = output.fileHandleForReading.availableData
            try #require(!data.isEmpty, "the run ended before its first result: \(text)")
            text += String(decoding: data, as: UTF8.self)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).count == 1, "the run's files")
        let interrupted = ContinuousClock.now
        if number == SIGPIPE {
            // Its next line goes to a pipe no one reads.
            try output.fileHandleForReading.close()
        } else {
            kill(process.processIdentifier, number)
            // The measurements not run are in the table, cancelled.
            text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(text.contains("cancelled"), "\(text)")
        }
        process.waitUntilExit()
        // Cancelled, not run to the end (a run to the end removes its files too, and the exit
        // status says only which signal came): the next measurement ends the run, not the tenth.
        #expect(ContinuousClock.now - interrupted < .seconds(12), "the run stopped")
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + number)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    @Test("Runs SQLite subjects, each beside raw SQLite and zlib at its own durability, and LMDB in the same run")
    func sqliteSubjects() throws {
        let (status, text) = try runTiercache([
            "bench", "--tiers", "sqlite,sqlite-full,lmdb", "--keys", "500", "--requests", "1000", "--tasks", "1",
        ])
        #expect(status == 0, "\(text)")
        for subject in ["sqlite", "sqlite-full", "raw SQLite+zlib 256 MiB", "raw SQLite+zlib 256 MiB full sync"] {
            #expect(text.contains(subject), "\(subject) in the table")
        }
        // The throughput table's rows (they end with the run's status).
        let rows = text.split(separator: "\n").filter {
            ($0.hasPrefix("sqlite ") || $0.hasPrefix("sqlite-full ")) && $0.hasSuffix(" ok")
        }
        #expect(rows.count >= 2 && rows.allSatisfy { $0.contains("×") }, "ratios to the raw baselines: \(rows)")
    }

    /// They were accepted and ignored: a run asked for 10 keys replayed the trace's.
    @Test("With --trace the run replays the trace; the synthetic workload's options are refused")
    func traceRefusesSyntheticOptions() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let trace = directory.url.appendingPathComponent("keys.csv")
        try (["key"] + (0..<300).map { "\($0 % 37)" }).joined(separator: "\n").write(
            to: trace, atomically: true, encoding: .utf8)
        let run = [
            "bench", "--tiers", "memory", "--trace", trace.path, "--requests", "200", "--warm-up", "50",
            "--no-baselines",
        ]
        let (status, text) = try runTiercache(run)
        #expect(status == 0, "\(text)")
        #expect(text.contains("memory-lru"), "\(text)")
        for synthetic in [["--keys", "0"], ["--distribution", "scan:200000:0.2"], ["--skew", "0.5"]] {
            let (status, text) = try runTiercache(run + synthetic)
            #expect(status != 0, "\(synthetic): \(text)")
            #expect(text.contains("--trace replays its own keys"), "\(synthetic): \(text)")
        }
    }

    @Test(
        "Refuses bad options with a message",
        arguments: [
            (["--tiers", "memory-nonsense"], "unknown memory policy"),
            (["--tiers", "floppy"], "unknown subject"),
            (["--tiers", "redis"], "needs --redis"),
            (["--tasks", "0"], "--tasks"),
            (["--tasks", "1,x"], "--tasks"),
            (["--value-size", "0"], "positive"),
            (["--value-size", "-5"], "size"),
            (["--mix", "1:2:3:4"], "READS:WRITES"),
            (["--distribution", "scan:99999999:0.5"], "hot set"),
            (["--duration", "ten"], "--duration"),
            (["--keys", "0"], "keys"),
            (["--trace", "/nonexistent/trace.csv"], "nonexistent"),
            // Each of these was accepted and ran something else than asked, without a word.
            (["--mix", "90::10"], "READS:WRITES"),
            (["--memory", "0"], "--memory must be positive"),
            (["--directory", "/nonexistent/scratch"], "is not a writable directory"),
            (["--requests", "1000", "--duration", "1s"], "give one"),
            (["--report", "csv"], "give --output"),
            (["--output", NSTemporaryDirectory(), "--report", ","], "names no format"),
            (["--output", NSTemporaryDirectory(), "--report", "csv,pdf"], "unknown report format \"pdf\""),
        ])
    func refuses(_ arguments: [String], _ message: String) throws {
        let (status, text) = try runTiercache(["bench"] + arguments)
        #expect(status != 0)
        #expect(text.contains(message), "\(text)")
    }

    @Test("Without the Encryption trait, the encrypted subject says how to build it")
    func encryptedNeedsTheTrait() throws {
        let (status, text) = try runTiercache(["bench", "--tiers", "lmdb-encrypted", "--requests", "1000"])
        #expect(status != 0 && text.contains("--traits Encryption"))
    }
}
