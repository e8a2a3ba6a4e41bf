import ArgumentParser
import Foundation
import TierCache
import TierCacheBenchmarking
import TierCacheLMDB

/// `tiercache demo`: a memory tier over an LMDB tier in a temporary directory, driven by a
/// skewed (Zipf) read-through workload, with each tier's statistics printed at the end.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a read-through workload on memory over LMDB in a temporary directory.")

    @Option(help: "Distinct keys in the workload.")
    var keys = 50_000
    @Option(help: "Lookups to perform.")
    var operations = 300_000
    @Option(help: "Zipf skew (0 is uniform; 0.8-1.0 is typical of web traffic).")
    var skew = 0.9
    @Option(help: "Memory tier capacity.", transform: ByteCount.init(parsing:))
    var memory = ByteCount(bytes: 8 << 20)
    @Option(help: "Disk tier capacity.", transform: ByteCount.init(parsing:))
    var disk = ByteCount(bytes: 64 << 20)
    @Option(help: "Mean value size in bytes (JSON-like, compressible).")
    var valueSize = 2048
    @Option(help: "Directory for the disk tier (default: a temporary directory, deleted afterwards).")
    var directory: String?

    func validate() throws {
        guard keys > 0, operations > 0 else { throw ValidationError("--keys and --operations must be positive") }
        // The generator's table holds a number per key, as a bench workload's does.
        guard keys <= Workload.maximumKeys else {
            throw ValidationError("--keys is at most \(Workload.maximumKeys), as for bench (got \(keys))")
        }
        guard skew >= 0, skew.isFinite else { throw ValidationError("--skew must be zero or positive") }
        guard valueSize > 0 else { throw ValidationError("--value-size must be positive") }
        // Values reach 1.5 times the mean; one past 5% of the larger tier is refused by both, so
        // every lookup would miss and build it again.
        let largestAdmitted = max(memory.bytes, disk.bytes) / 20
        guard valueSize <= largestAdmitted * 2 / 3 else {
            throw ValidationError(
                "--value-size \(valueSize) makes values larger than either tier admits (5% of its capacity, "
                    + "\(ByteCount.format(largestAdmitted)) for \(ByteCount.format(max(memory.bytes, disk.bytes)))): "
                    + "use at most \(largestAdmitted * 2 / 3), or larger tiers")
        }
    }

    func run() async throws {
        let command = self
        try await SignalCancellation.run { try await command.demo() }
    }

    private func demo() async throws {
        let temporary = directory == nil
        let location =
            directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-demo-\(UUID().uuidString)")
        defer { if temporary { try? FileManager.default.removeItem(at: location) } }

        let cache: TieredCache
        do {
            cache = TieredCache(
                tiers: [
                    try MemoryTier(capacity: memory.bytes),
                    try LMDBTier(directory: location, configuration: .init(capacity: disk.bytes, durability: .none)),
                ],
                policyTable: StoragePolicyTable(
                    ["https": .allowed, "http": .allowedInMemoryOnly], default: .notAllowed))
        } catch {
            throw CommandFailure("\(error)")
        }
        print("tiercache demo: \(operations) lookups over \(keys) keys (Zipf \(skew)), ~\(valueSize) B values")
        print("memory \(memory) over LMDB \(disk) at \(location.path)\n")

        var generator = ZipfGenerator(count: keys, skew: skew, seed: 42)
        let start = ContinuousClock.now
        var fetches = 0
        for _ in 0..<operations {
            // Interrupted (`SignalCancellation`): out through the directory's removal.
            try Task.checkCancellation()
            let index = generator.next()
            // One key in ten is an http:// URL, which the policy table keeps in memory only.
            let scheme = index % 10 == 0 ? "http" : "https"
            let url = "\(scheme)://api.example.com/items/\(index)"
            let key = try CacheKey("GET \(url)")
            if await cache.entry(forKey: key) == nil {
                fetches += 1
                let value = Self.jsonValue(index: index, meanSize: valueSize)
                await cache.store(CacheEntry(value: value, storedAt: Date()), forKey: key, url: URL(string: url)!)
            }
        }
        let elapsed = ContinuousClock.now - start
        let seconds = elapsed.inSeconds

        print(Self.row("tier", "hits", "misses", "hit ratio", "stores", "evictions", "refused", "in use"))
        for (name, s) in await cache.statistics() {
            let inUse =
                s.usage.map {
                    "\(ByteCount.format($0.bytes)) / \(ByteCount.format($0.capacity)), \($0.entries) entries"
                } ?? "-"
            print(
                Self.row(
                    name, "\(s.hits)", "\(s.misses)", s.hitRatio.map { String(format: "%.3f", $0) } ?? "-",
                    "\(s.stores)", "\(s.evictions)", "\(s.refusedTooLarge) size, \(s.refusedByPolicy) policy", inUse))
        }
        let hitRatio = 1 - Double(fetches) / Double(operations)
        print(
            String(
                format: "\noverall hit ratio %.3f, %.0f lookups/s (%.2f s)", hitRatio, Double(operations) / seconds,
                seconds))
    }

    private static func row(_ columns: String...) -> String {
        let widths = [8, 9, 9, 10, 9, 10, 22, 0]
        return zip(columns, widths).map { $1 == 0 ? $0 : $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(
            separator: " ")
    }

    /// A JSON document of about `meanSize` bytes whose size varies with the key.
    static func jsonValue(index: Int, meanSize: Int) -> [UInt8] {
        let target = max(64, meanSize / 2 + (index * 7919) % max(1, meanSize))
        var json = "{\"id\":\(index),\"name\":\"item \(index)\",\"tags\":["
        var tag = 0
        while json.utf8.count < target - 2 {
            json += "\"tag-\((index &+ tag) % 97)\","
            tag += 1
        }
        json += "\"end\"]}"
        return Array(json.utf8)
    }
}

/// Zipf-distributed indices in `0..<count`, by inverting a precomputed cumulative distribution.
struct ZipfGenerator {
    private let cumulative: [Double]
    private var state: UInt64

    init(count: Int, skew: Double, seed: UInt64) {
        var sums = [Double]()
        sums.reserveCapacity(count)
        var total = 0.0
        for rank in 1...count {
            total += 1 / pow(Double(rank), skew)
            sums.append(total)
        }
        cumulative = sums.map { $0 / total }
        state = seed
    }

    mutating func next() -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let uniform = Double(state >> 11) / Double(1 << 53)
        var low = 0, high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] < uniform { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
