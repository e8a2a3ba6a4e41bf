import DiskTestSupport
import Foundation
import Testing

@testable import TierCacheRedis

/// Two real processes (`tiercache-harness coherence-soak`) write and read the same keys through
/// coherent memory-over-Redis caches for a minute, with Redis killed and restarted in the middle;
/// their logs are then checked against each other: no read returns a value older than the last
/// acknowledged write of its key once that write's invalidation reached the reader (or the
/// reader flushed). The staleness window, from a write's acknowledgement to the other process
/// applying its invalidation, is printed (`TIERCACHE_SOAK_SECONDS` shortens the run).
@Suite(
    .enabled(if: RedisProcess.serverPath != nil, "redis-server is not installed"), .timeLimit(.minutes(5)), .serialized)
struct RedisCoherenceSoakTests {
    @Test(
        "Two processes, a Redis restart: no stale read after an invalidation was delivered",
        arguments: ["broadcast", "keys-read"])
    func twoProcessSoak(tracking: String) async throws {
        let seconds = ProcessInfo.processInfo.environment["TIERCACHE_SOAK_SECONDS"].flatMap(Double.init) ?? 60
        // Every acknowledged write survives the restart (appendfsync always): a value lost by
        // Redis is not one the caches could have kept coherent.
        let redis = try await RedisProcess(arguments: ["--appendonly", "yes", "--appendfsync", "always"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let prefix = "soak:\(UUID().uuidString):"
        let workers = try (0..<2).map { role in
            let process = Process()
            process.executableURL = try harnessExecutable()
            process.arguments = [
                "coherence-soak", "--port", "\(redis.port)", "--prefix", prefix, "--role", "\(role)",
                "--seconds", "\(seconds)", "--tracking", tracking, "--output",
                directory.appendingPathComponent("\(role).log").path,
            ]
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            return process
        }
        // The fault, half-way through the run (a timeline, not a wait for an event).
        try await Task.sleep(for: .seconds(seconds / 2))
        redis.kill()
        try await redis.start()
        for worker in workers {
            // On a Dispatch thread: a detached task runs on the concurrency pool (two threads
            // here), and the two cases of this test, each waiting half a run for its workers,
            // held both threads, so every other test of the run stalled with them.
            try await onDispatch { worker.waitUntilExit() }
            #expect(worker.terminationStatus == 0)
        }

        let logs = try (0..<2).map {
            try SoakLogFile(String(contentsOf: directory.appendingPathComponent("\($0).log"), encoding: .utf8))
        }
        var checked = 0, violations: [String] = [], windows: [UInt64] = []
        for reader in 0..<2 {
            let check = logs[reader].check(writes: logs[0].writes.merging(logs[1].writes) { $0 + $1 })
            checked += check.checked
            violations += check.violations
            windows += logs[reader].windows(of: logs[1 - reader].writes)
        }
        #expect(violations.isEmpty, "\(violations.count) stale reads, first: \(violations.prefix(5))")
        #expect(checked > 1_000, "only \(checked) reads came after an invalidation")
        #expect(logs.allSatisfy { $0.losses >= 1 && $0.subscriptions >= 2 }, "the restart was not seen")
        windows.sort()
        let p50 = windows.isEmpty ? 0 : windows[windows.count / 2]
        let p99 = windows.isEmpty ? 0 : windows[min(windows.count - 1, windows.count * 99 / 100)]
        print(
            "coherence soak (\(tracking)): \(checked) reads checked, \(windows.count) invalidations timed; "
                + "staleness window p50 \(Double(p50) / 1_000) µs, p99 \(Double(p99) / 1_000) µs")
    }
}

/// One soak process's log (see `CoherenceSoakCommand`), parsed.
struct SoakLogFile {
    struct Write {
        var seq: UInt64
        var sent: UInt64
        var acknowledged: UInt64
    }
    struct Read {
        var key: String
        var seq: UInt64
        var started: UInt64
    }

    var writes: [String: [Write]] = [:]
    var reads: [Read] = []
    /// When each key's invalidations were applied here.
    var applied: [String: [UInt64]] = [:]
    var flushes: [UInt64] = []
    var interruptions: [UInt64] = []
    var losses = 0, subscriptions = 0

    init(_ text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            func number(_ index: Int) -> UInt64 { index < fields.count ? UInt64(fields[index]) ?? 0 : 0 }
            switch fields.first {
            case "W":
                writes[String(fields[1]), default: []].append(
                    Write(seq: number(2), sent: number(3), acknowledged: number(4)))
            case "R": reads.append(Read(key: String(fields[1]), seq: number(2), started: number(3)))
            case "I": applied[String(fields[1]), default: []].append(number(2))
            case "F": flushes.append(number(1))
            case "L":
                losses += 1
                interruptions.append(number(1))
            case "S":
                subscriptions += 1
                interruptions.append(number(1))
            default: break
            }
        }
        // Appended by several threads: in clock order for the searches below.
        for key in applied.keys { applied[key]?.sort() }
        flushes.sort()
        interruptions.sort()
    }

    /// When this process had certainly dropped every value older than a write sent at `sent`:
    /// the first invalidation of the key, or flush, applied at or after the write was sent.
    private func delivery(of key: String, sentAt sent: UInt64) -> UInt64? {
        let invalidation = applied[key]?.first { $0 >= sent }
        let flush = flushes.first { $0 >= sent }
        return [invalidation, flush].compactMap { $0 }.min()
    }

    /// The reads here that came after some write's delivery, and those that returned an older
    /// value than that write's (a miss, seq 0, is not a value: Redis was down).
    func check(writes: [String: [Write]]) -> (checked: Int, violations: [String]) {
        var deliveries: [String: [(at: UInt64, seq: UInt64)]] = [:]
        for (key, list) in writes {
            deliveries[key] = list.compactMap { write in delivery(of: key, sentAt: write.sent).map { ($0, write.seq) } }
                .sorted { $0.at < $1.at }
        }
        var checked = 0
        var violations: [String] = []
        for read in reads where read.seq != 0 {
            guard let delivered = deliveries[read.key]?.last(where: { $0.at <= read.started }) else { continue }
            checked += 1
            if read.seq < delivered.seq {
                violations.append("\(read.key): read \(read.seq) after \(delivered.seq)'s invalidation")
            }
        }
        return (checked, violations)
    }

    /// For `writes` made by the other process: how long after each acknowledgement this process
    /// applied the key's invalidation (0 when it came before), leaving out those a tracking loss
    /// or subscription fell between, and writes that had none of their own: in `keys-read` mode a
    /// write of a key this process had not read since its last change is not reported, and the
    /// next invalidation, applied after the next write was sent, belongs to that write.
    func windows(of writes: [String: [Write]]) -> [UInt64] {
        var windows: [UInt64] = []
        for (key, list) in writes {
            for (index, write) in list.enumerated() {
                let nextSent = index + 1 < list.count ? list[index + 1].sent : .max
                guard let at = applied[key]?.first(where: { $0 >= write.sent }), at < nextSent,
                    !interruptions.contains(where: { $0 >= write.sent && $0 <= at })
                else { continue }
                windows.append(at > write.acknowledged ? at - write.acknowledged : 0)
            }
        }
        return windows
    }
}

@Suite("tiercache-harness coherence-soak: bad options are refused before anything starts")
struct CoherenceSoakOptionsTests {
    @Test(
        "Each bad option exits with a usage error naming it",
        arguments: [
            (["--writers", "0"], "--writers"), (["--role", "2"], "--role"), (["--role", "-1"], "--role"),
            (["--keys", "0"], "--keys"), (["--seconds", "0"], "--seconds"), (["--seconds", "1e10"], "--seconds"),
            (["--seconds", "nan"], "--seconds"), (["--port", "0"], "--port"),
        ])
    func badOptions(option: [String], named: String) throws {
        var arguments = ["coherence-soak", "--port", "6379", "--prefix", "p:", "--role", "0", "--output", "/dev/null"]
        arguments += option
        let (status, output) = try runProcess(try harnessExecutable(), arguments)
        #expect(status == 64, "\(option): \(output)")
        #expect(output.contains(named), "\(option): \(output)")
    }
}
