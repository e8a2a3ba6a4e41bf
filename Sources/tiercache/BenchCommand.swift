import ArgumentParser
import CacheSimulation
import Foundation
import TierCache
import TierCacheBenchmarking

#if BenchmarkEncryption
import Crypto
import TierCacheEncryption
#endif

#if BenchmarkRedis
import TierCacheRedis
#endif

/// `tiercache bench`: the README's main job, a thin shell over TierCacheBenchmarking. Drives the
/// chosen subjects, each beside its baseline, with a synthetic workload or a trace, and reports
/// throughput, latency percentiles, hit ratios and each tier's counters.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark tiers (memory with any policy, LMDB, memory over LMDB, Redis) against same-run baselines.",
        discussion: """
            Every read that misses stores the value (read-through), as an application would. Each subject runs the same \
            requests, split across --tasks concurrent tasks (a list sweeps them), beside its baseline: memory tiers \
            beside a minimal LRU, SQLite beside SQLite and zlib called directly, the others beside LMDB and zstd \
            called directly. With no arguments: memory, LMDB and \
            memory over LMDB in a temporary directory, about half a minute on two cores.

            Subjects: \(SubjectName.help).
            """)

    @Option(name: [.long, .customLong("subjects")], help: "Subjects, comma-separated (see above).")
    var tiers = "memory,lmdb,tiered"
    @Option(help: "A trace to replay instead of a synthetic workload (formats as for simulate).")
    var trace: String?
    @Option(help: "The trace's format (default: guessed from its name).")
    var format: String?
    @OptionGroup var traceCacheOptions: TraceCacheOptions
    // The synthetic workload's options are optionals, so that one given where it is unused (with
    // --trace, or --skew with a distribution without one) is refused rather than ignored.
    @Option(help: "Distinct keys of the synthetic workload (100,000 by default).")
    var keys: Int?
    @Option(
        help: """
            Key distribution: zipf (with --skew), uniform, hotspot[:KEY-FRACTION:PROBABILITY] (default 0.2:0.8), \
            scan[:HOT-KEYS:SCAN-PROBABILITY] (default a tenth of the keys, 0.2). zipf by default.
            """)
    var distribution: String?
    @Option(help: "Zipf skew of zipf and scan (0 is uniform; 0.8-1.0 is typical of web traffic; 0.99 by default).")
    var skew: Double?
    @Option(
        help:
            "Measured requests per subject in each round (a trace is cut or repeated to this length; 200,000 by default)."
    )
    var requests: Int?
    @Option(help: "Measure each round for this long instead of a number of requests (e.g. 10s, 500ms, 2m).")
    var duration: String?
    @Option(
        help:
            "Measured rounds, each subject alternating with its baseline; the ratio is the median of the rounds' ratios."
    )
    var rounds = 3
    @Option(help: "Requests before measuring, to fill the caches (not measured).")
    var warmUp = 0
    @Option(
        help:
            "Value sizes: SIZE or MIN-MAX (uniform per key), in bytes or with a unit (256-4096 by default; a trace that carries sizes uses its own)."
    )
    var valueSize: String?
    @Option(help: "Reads:writes[:deletes], as shares or percentages (reads go through: a miss stores).")
    var mix = "100:0:0"
    @Option(help: "Concurrent tasks; a comma-separated list sweeps them (1,2,4,8).")
    var tasks = "2"
    // The capacities are optionals too: one given for no subject that has such a tier is refused.
    @Option(help: "Memory tier capacity (16 MiB by default).", transform: ByteCount.init(parsing:))
    var memory: ByteCount?
    @Option(
        help: "Disk tier capacity (the LMDB and SQLite subjects and their baselines; 256 MiB by default).",
        transform: ByteCount.init(parsing:))
    var diskCapacity: ByteCount?
    @Option(help: "Where disk subjects keep their files (default: the temporary directory); deleted afterwards.")
    var directory: String?
    @Option(help: "The Redis server of the redis subject: redis://[user:password@]HOST[:PORT][/DB].")
    var redis: String?
    @Option(help: "Redis tier capacity (256 MiB by default).", transform: ByteCount.init(parsing:))
    var redisCapacity: ByteCount?

    /// `--memory`, or its default.
    var memoryCapacity: ByteCount { memory ?? ByteCount(bytes: 16 << 20) }
    /// `--disk-capacity`, or its default.
    var diskTierCapacity: ByteCount { diskCapacity ?? ByteCount(bytes: 256 << 20) }
    /// `--redis-capacity`, or its default.
    var redisTierCapacity: ByteCount { redisCapacity ?? ByteCount(bytes: 256 << 20) }
    @Flag(help: "Store every key before the warm-up (with --mix 100:0:0 and --no-read-through: a get-hit run).")
    var prefill = false
    @Flag(help: "Reads that miss store nothing (by default a miss stores the value, as an application would).")
    var noReadThrough = false
    @Option(help: "Time one measured request in this many for the latency percentiles (1 times them all).")
    var latencySampling = 8
    @Flag(help: "Leave the baselines out (no same-run ratios).")
    var noBaselines = false
    @OptionGroup var reportOptions: ReportOptions

    func validate() throws {
        try TraceOptions.validate(format: format)
        _ = try subjects()
        // Checked now, not when the subject's turn comes after the others have run.
        let used = capacitiesInUse
        for (option, given, kind) in [
            ("--memory", memory, SubjectName.Capacity.memory), ("--disk-capacity", diskCapacity, .disk),
            ("--redis-capacity", redisCapacity, .redis),
        ] {
            guard let given else { continue }
            guard used.contains(kind) else {
                throw ValidationError("\(option) sizes a tier none of the subjects (\(tiers)) has")
            }
            guard given.bytes > 0 else { throw ValidationError("\(option) must be positive") }
        }
        if redis != nil, !used.contains(.redis) {
            throw ValidationError("--redis is the redis subject's server: add redis to --tiers")
        }
        if directory != nil, !used.contains(.disk) {
            throw ValidationError("--directory holds the disk subjects' files: none of the subjects (\(tiers)) has one")
        }
        if let directory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
                FileManager.default.isWritableFile(atPath: directory)
            else { throw ValidationError("--directory \(directory) is not a writable directory") }
        }
        if trace != nil, keys != nil || distribution != nil || skew != nil {
            throw ValidationError(
                "--keys, --distribution and --skew shape a synthetic workload: --trace replays its own keys")
        }
        if trace == nil, format != nil || traceCacheOptions.traceCache != nil || traceCacheOptions.noTraceCache {
            throw ValidationError("--format, --trace-cache and --no-trace-cache are for --trace: give it")
        }
        // With a trace the synthetic options are unused: a stand-in trace of one request checks
        // the rest.
        let standIn = try trace.map { _ in try Trace(name: "--trace", requests: [TraceRequest(key: 1)]) }
        _ = try plan(trace: standIn)
    }

    func subjects() throws -> [BenchmarkSubject] {
        let names = subjectNames
        guard !names.isEmpty else { throw ValidationError("name at least one subject") }
        return try names.map { try SubjectName.subject($0, options: self) }
    }

    /// The kinds of tier the subjects have, each sized by its own option.
    var capacitiesInUse: Set<SubjectName.Capacity> { Set(subjectNames.flatMap(SubjectName.capacities(of:))) }

    /// `--tiers`, split.
    var subjectNames: [String] {
        tiers.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
    }

    func taskCounts() throws -> [Int] {
        let counts = tasks.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !counts.isEmpty, let values = counts as? [Int], values.allSatisfy({ (1...256).contains($0) }) else {
            throw ValidationError("--tasks takes counts from 1 to 256, comma-separated (got \"\(tasks)\")")
        }
        return values
    }

    /// `--requests`, or its default.
    var requestCount: Int { requests ?? 200_000 }

    func plan(trace loaded: Trace?) throws -> BenchmarkPlan {
        guard requestCount > 0 else { throw ValidationError("--requests must be positive") }
        // One length or the other: the count was dropped without a word under --duration.
        if requests != nil, duration != nil {
            throw ValidationError("--requests and --duration each set how long to measure: give one")
        }
        guard warmUp >= 0 else { throw ValidationError("--warm-up must be zero or positive") }
        let workload: Workload
        // Read only without a trace (with one, --keys and --distribution are refused).
        let distribution = loaded == nil ? try keyDistribution() : .uniform
        if let loaded, loaded.hasSizes, valueSize != nil {
            throw ValidationError(
                "--value-size sizes the objects of a trace without sizes; \(loaded.name) carries its own")
        }
        do {
            let sizes = try ValueSizes(parsing: valueSize ?? "256-4096")
            var mix = try OperationMix(parsing: mix)
            mix.readThrough = !noReadThrough
            if let loaded {
                workload = Workload(.trace(loaded, sizesIfAbsent: sizes), mix: mix)
            } else {
                workload = Workload(
                    .synthetic(keys: keys ?? Self.defaultKeys, distribution: distribution, sizes: sizes), mix: mix)
            }
        } catch {
            throw ValidationError(error.description)
        }
        var plan = BenchmarkPlan(
            workload: workload, length: .requests(requestCount), warmUp: .requests(warmUp), tasks: try taskCounts(),
            baselines: !noBaselines, rounds: rounds)
        if let duration { plan.length = .duration(try Self.parseDuration(duration)) }
        plan.prefill = prefill
        plan.latencySampling = latencySampling
        do { try plan.validate() } catch { throw ValidationError(error.description) }
        return plan
    }

    static let defaultKeys = 100_000

    func keyDistribution() throws -> KeyDistribution {
        let distribution = self.distribution ?? "zipf"
        let keys = self.keys ?? Self.defaultKeys
        let parts = distribution.lowercased().split(separator: ":").map(String.init)
        let numbers = parts.dropFirst().map { Double($0) }
        guard numbers.allSatisfy({ $0 != nil }) else {
            throw ValidationError("--distribution \(distribution): the parameters must be numbers")
        }
        let values = numbers.compactMap { $0 }
        if skew != nil, parts.first != "zipf", parts.first != "scan" {
            throw ValidationError("--skew is zipf's and scan's: --distribution \(distribution) has none")
        }
        let skew = self.skew ?? 0.99
        switch (parts.first, values.count) {
        case ("zipf", 0): return .zipf(skew: skew)
        case ("uniform", 0): return .uniform
        case ("hotspot", 0): return .hotspot(hotFraction: 0.2, hotProbability: 0.8)
        case ("hotspot", 2): return .hotspot(hotFraction: values[0], hotProbability: values[1])
        case ("scan", 0): return .scan(hotKeys: max(1, keys / 10), scanProbability: 0.2, skew: skew)
        case ("scan", 2):
            // Int(_:) traps on NaN, the infinities and values past Int; a fraction of a key is no count either.
            guard let hotKeys = Int(exactly: values[0]) else {
                throw ValidationError("--distribution \(distribution): the hot set is a whole number of keys")
            }
            return .scan(hotKeys: hotKeys, scanProbability: values[1], skew: skew)
        default:
            throw ValidationError(
                "--distribution is zipf, uniform, hotspot[:FRACTION:PROBABILITY] or scan[:HOT-KEYS:PROBABILITY]")
        }
    }

    /// The longest `--duration`: a year, far past any benchmark, and far inside what a count of
    /// milliseconds (an Int64) holds.
    static let longestDuration = 365 * 24 * 3600.0

    /// `10s`, `500ms`, `2m`, `1.5s`; at most ``longestDuration``.
    static func parseDuration(_ text: String) throws -> Duration {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for unit in units where text.hasSuffix(unit.suffix) {
            if let value = Double(text.dropLast(unit.suffix.count)), value > 0, value.isFinite {
                guard value * unit.seconds <= longestDuration else {
                    throw ValidationError("--duration is at most a year, 8760h (got \"\(text)\")")
                }
                guard value * unit.seconds >= 0.001 else {
                    throw ValidationError("--duration is at least 1ms (got \"\(text)\")")
                }
                return .milliseconds(Int64((value * unit.seconds * 1000).rounded()))
            }
        }
        throw ValidationError("--duration takes a positive time with a unit: 500ms, 10s, 2m (got \"\(text)\")")
    }

    func run() async throws {
        let command = self
        try await SignalCancellation.run { try await command.bench() }
    }

    private func bench() async throws {
        // A run of so many requests reads no more of the trace than it replays (a long trace
        // loaded whole could pass the 2^31 requests the simulator numbers); a timed run cycles
        // through all of it. (`validate()` bounded the rounds' requests: the sum cannot wrap.)
        let limit = duration == nil ? warmUp &+ rounds &* requestCount : nil
        let loaded = try trace.map {
            try TraceOptions.load($0, format: format, limit: limit, cache: traceCacheOptions.cache)
        }
        // What the trace turned out to hold is not a usage error (`validate()` checked the
        // arguments with no trace loaded).
        let plan: BenchmarkPlan
        do { plan = try self.plan(trace: loaded) } catch let error as ValidationError {
            throw CommandFailure(error.message)
        }
        let subjects = try subjects()
        let runner: BenchmarkRunner
        do { runner = try BenchmarkRunner(plan: plan) } catch { throw CommandFailure(error.description) }
        print(
            "tiercache bench: \(plan.workload); \(plan.length) per subject in each of \(plan.rounds) round(s), over \(tasks) task(s)"
        )
        let used = capacitiesInUse
        var capacities: [String] = []
        if used.contains(.memory) { capacities.append("memory \(memoryCapacity)") }
        if used.contains(.disk) {
            capacities.append("disk \(diskTierCapacity) (in \(directory ?? "the temporary directory"))")
        }
        if used.contains(.redis) { capacities.append("Redis \(redisTierCapacity)") }
        print(capacities.joined(separator: ", ") + "\n")
        let results = await runner.run(subjects, scratchDirectory: directory.map(URLPath.url)) { result in
            // One line per result as it comes, flushed: a pipe sees the first figure at once.
            let figure =
                result.failure
                ?? "\(ChartFormat.compact(result.throughput)) requests/s, hit ratio "
                + (result.reads > 0 ? ChartFormat.percent(result.hitRatio) : "-")
            print("  \(result.subject), \(result.tasks) task\(result.tasks == 1 ? "" : "s"): \(figure)")
            fflush(nil)
        }
        let report = results.report(title: "TierCache bench")
        print("")
        for table in report.tables where !table.rows.isEmpty {
            print(table.text)
            print("")
        }
        // An interrupted run's report, its subjects mostly cancelled, would replace a whole one.
        if Task.isCancelled {
            if reportOptions.output != nil { StandardError.write("interrupted: no report written\n") }
        } else {
            try reportOptions.write(report, baseName: "bench")
        }
        if results.results.contains(where: { $0.failure != nil || $0.baselineFailure != nil }) { throw ExitCode(1) }
    }
}

/// The subjects `tiercache bench` knows by name.
enum SubjectName {
    static let help =
        "memory (memory-lru), memory-POLICY (\(MemoryTier.EvictionPolicy.allCases.map { $0.rawValue.lowercased() }.joined(separator: ", "))), "
        + "lmdb, lmdb-dictionary, lmdb-encrypted, sqlite, sqlite-full (synced commits), tiered (memory over LMDB), "
        + "redis (with --redis URL), and the baselines minimal-lru, raw-lmdb, raw-sqlite and raw-sqlite-full"

    /// The kinds of tier a subject has, each sized by its own option.
    enum Capacity { case memory, disk, redis }

    /// The capacities subject `name` is sized by (an unknown name is refused elsewhere).
    static func capacities(of name: String) -> [Capacity] {
        switch name.lowercased() {
        case "memory", "minimal-lru": [.memory]
        case "tiered", "memory+lmdb": [.memory, .disk]
        case "redis": [.redis]
        case let other where other.hasPrefix("memory-"): [.memory]
        default: [.disk]
        }
    }

    static func subject(_ name: String, options: BenchCommand) throws -> BenchmarkSubject {
        let memory = options.memoryCapacity.bytes
        let disk = options.diskTierCapacity.bytes
        switch name.lowercased() {
        case "memory": return .memory(capacity: memory)
        case "lmdb": return .lmdb(capacity: disk)
        case "lmdb-dictionary": return .lmdb(capacity: disk, atRest: .trainedDictionary)
        case "lmdb-encrypted":
            #if BenchmarkEncryption
            // A fresh key per run: the run measures sealing, and nothing outlives it.
            let sealing = try EncryptionAtRest(currentKey: .init(id: 1, key: SymmetricKey(size: .bits256)))
            return .lmdb(capacity: disk, atRest: .encrypted(sealing))
            #else
            throw ValidationError(
                "this tiercache was built without encryption; rebuild it with "
                    + "`swift build -c release --product tiercache --traits Encryption`")
            #endif
        case "tiered", "memory+lmdb": return .memoryOverLMDB(memory: memory, disk: disk)
        case "sqlite": return .sqlite(capacity: disk)
        case "sqlite-full": return .sqlite(capacity: disk, durability: .full)
        case "minimal-lru": return .minimalLRU(capacity: memory)
        case "raw-lmdb": return .rawLMDBZstd(capacity: disk)
        case "raw-sqlite": return .rawSQLiteZlib(capacity: disk)
        case "raw-sqlite-full": return .rawSQLiteZlib(capacity: disk, durability: .full)
        case "redis":
            guard let url = options.redis else { throw ValidationError("the redis subject needs --redis URL") }
            #if BenchmarkRedis
            // Read now, not when the subject's turn comes after the others have run.
            do { _ = try RedisEndpoint(url: url) } catch { throw ValidationError("--redis: \(error)") }
            return .redis(url: url, capacity: options.redisTierCapacity.bytes)
            #else
            _ = url
            throw ValidationError(
                "this tiercache was built without a Redis client; rebuild it with "
                    + "`swift build -c release --product tiercache --traits Redis`")
            #endif
        case let other where other.hasPrefix("memory-"):
            let policyName = String(other.dropFirst("memory-".count))
            guard let policy = PolicyKind(name: policyName)?.memoryTierPolicy else {
                throw ValidationError("unknown memory policy \"\(policyName)\"; subjects: \(help)")
            }
            return .memory(capacity: memory, policy: policy)
        default:
            throw ValidationError("unknown subject \"\(name)\"; subjects: \(help)")
        }
    }
}
