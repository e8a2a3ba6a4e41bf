import ArgumentParser
import Foundation
@_spi(TierCacheInternals) import TierCache
import TierCacheRedis

/// One process of the coherence soak test: a memory tier over a Redis tier, kept coherent, that
/// writes its share of the keys and reads all of them, logging every acknowledged write, every
/// read and every invalidation applied, with the machine's monotonic clock (the same in every
/// process), for the test to check against the other process's log.
///
/// Log lines: `W key seq sent acknowledged`, `R key seq started` (seq 0: a miss),
/// `I key applied`, `F at` (upper tiers flushed), `L at` (tracking lost), `S at` (subscribed).
struct CoherenceSoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coherence-soak",
        abstract:
            "Write and read shared keys through a coherent memory-over-Redis cache, logging everything (for tests).")

    @Option(help: "The Redis server's port on 127.0.0.1.") var port: Int
    @Option(help: "The key prefix both processes share.") var prefix: String
    @Option(help: "This process writes the keys whose number modulo `writers` is `role`.") var role: Int
    @Option(help: "How many processes write.") var writers = 2
    @Option(help: "How many keys.") var keys = 64
    @Option(help: "How long to run.") var seconds = 60.0
    @Option(help: "Where the log goes.") var output: String
    @Option(help: "Which keys the server reports: broadcast (every write) or keys-read.")
    var tracking: TrackingModeArgument = .broadcast

    enum TrackingModeArgument: String, ExpressibleByArgument {
        case broadcast
        case keysRead = "keys-read"

        var mode: RedisCoherence.Configuration.TrackingMode {
            switch self {
            case .broadcast: .broadcast
            case .keysRead: .keysRead
            }
        }
    }

    func validate() throws {
        guard (1...65_535).contains(port) else { throw ValidationError("--port must be from 1 to 65535, not \(port)") }
        guard writers >= 1 else { throw ValidationError("--writers must be at least 1, not \(writers)") }
        guard (0..<writers).contains(role) else {
            throw ValidationError("--role must be from 0 to \(writers - 1) (one less than --writers), not \(role)")
        }
        guard keys >= 1 else { throw ValidationError("--keys must be at least 1, not \(keys)") }
        // A day at most: `.seconds` of a larger or non-finite value traps.
        guard seconds > 0, seconds <= 86_400 else {
            throw ValidationError("--seconds must be more than 0 and at most 86400, not \(seconds)")
        }
    }

    func run() async throws {
        let redis = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: port)), keyPrefix: prefix,
                capacity: 64 << 20, connectTimeout: .milliseconds(200), commandTimeout: .milliseconds(500),
                breakerThreshold: 3, breakerOpenDuration: .milliseconds(100)))
        let cache = TieredCache(tiers: [try MemoryTier(capacity: 16 << 20), redis])
        let log = SoakLog()
        let (subscribed, signal) = AsyncStream.makeStream(of: Void.self)
        let coherence = try RedisCoherence(
            cache: cache,
            configuration: .init(tracking: tracking.mode, healthCheckInterval: .milliseconds(250)) { event in
                let now = SoakLog.now()
                switch event {
                case .invalidated(let keys): for key in keys { log.append("I \(key.rawValue) \(now)") }
                case .flushed: log.append("F \(now)")
                case .trackingLost: log.append("L \(now)")
                case .subscribed:
                    log.append("S \(now)")
                    signal.yield()
                case .malformedPush(let detail): log.append("M \(now) \(detail)")
                }
            })
        let tracking = Task { await coherence.run() }
        for await _ in subscribed { break }

        let names = try (0..<keys).map { try CacheKey("key-\($0)") }
        let owned = names.indices.filter { $0 % writers == role }
        var sequence = [Int: UInt64]()
        let deadline = ContinuousClock.now + .seconds(seconds)
        var round = 0
        while ContinuousClock.now < deadline {
            let index = owned[round % owned.count]
            round += 1
            let next = (sequence[index] ?? 0) + 1
            sequence[index] = next
            let sent = SoakLog.now()
            let report = await cache.store(
                CacheEntry(value: withUnsafeBytes(of: next.littleEndian, Array.init), storedAt: Date()),
                forKey: names[index], policy: .allowed)
            let acknowledged = SoakLog.now()
            if case .stored = report.outcomes.last?.outcome {
                log.append("W \(names[index].rawValue) \(next) \(sent) \(acknowledged)")
            }
            for _ in 0..<10 {
                let key = names[Int.random(in: names.indices)]
                let started = SoakLog.now()
                let value = await cache.lookup(key)?.entry.value ?? []
                let seq = value.count == 8 ? value.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } : 0
                log.append("R \(key.rawValue) \(UInt64(littleEndian: seq)) \(started)")
            }
            // A pace the log can keep: about 300 writes and 3,000 reads a second.
            try await Task.sleep(for: .milliseconds(2))
        }
        tracking.cancel()
        await tracking.value
        try log.write(to: output)
        let statistics = coherence.statistics
        print(
            "invalidated keys \(statistics.invalidatedKeys), flushes \(statistics.flushes), "
                + "losses \(statistics.trackingLosses), malformed \(statistics.malformedPushes)")
    }
}

/// The lines of a soak process's log, appended from its loop and from coherence's events.
final class SoakLog: Sendable {
    private let lines = Locked<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    func write(to path: String) throws {
        try Data(lines.withLock { $0.joined(separator: "\n") + "\n" }.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// The monotonic clock in nanoseconds: comparable between processes of one machine.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
