import DiskTestSupport
import Foundation
import Testing
import TierCache

@testable import TierCacheRedis

/// A real Redis killed and restarted under the tier; a real cluster resharded under it.
@Suite(.timeLimit(.minutes(5))) struct RedisRecoveryTests {
    @Test(.enabled(if: RedisProcess.serverPath != nil, "redis-server is not installed"))
    func aKilledServerIsMissesUntilItComesBack() async throws {
        let server = try await RedisProcess()
        let tier = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)), capacity: 1 << 20,
                commandTimeout: .seconds(2), breakerThreshold: 2, breakerOpenDuration: .milliseconds(100)))
        let key = try CacheKey("survivor")
        #expect(try await tier.store(CacheEntry(value: [1, 2, 3], storedAt: Date()), forKey: key) == .stored)
        #expect(try await tier.entry(forKey: key)?.value == [1, 2, 3])

        server.kill()
        for _ in 0..<5 { #expect(try await tier.entry(forKey: key) == nil) }
        #expect(tier.counterSnapshot.errors >= 5)

        try await server.start()  // empty again: no persistence
        // The pool's backoff (at most 5 s) and the breaker (100 ms) let a retry through soon.
        var recovered = false
        for _ in 0..<600 where !recovered {
            recovered = (try? await tier.store(CacheEntry(value: [4], storedAt: Date()), forKey: key)) == .stored
            if !recovered { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(recovered, "the tier did not reconnect after the server came back")
        #expect(try await tier.entry(forKey: key)?.value == [4])
    }

    @Test(.enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"))
    func aKilledClusterNodeCostsOnlyItsOwnSlots() async throws {
        // A cluster of its own (the shared one stays whole for the other tests), which keeps
        // serving the slots it still covers when a primary dies.
        let cluster = try await TestCluster(
            nodes: 3, replicas: 0, options: ["--cluster-node-timeout", "1000", "--cluster-require-full-coverage", "no"])
        let (nodes, endpoints, cli) = (cluster.nodes, cluster.endpoints, cluster.cli)

        let tier = try RedisTier(
            configuration: .init(
                deployment: .cluster(seeds: endpoints), capacity: 1 << 20, commandTimeout: .milliseconds(300),
                breakerThreshold: 1_000, breakerOpenDuration: .milliseconds(100)))
        let keys = try (0..<60).map { try CacheKey("spread-\($0)") }
        for key in keys {
            #expect(try await tier.store(CacheEntry(value: [9], storedAt: Date()), forKey: key) == .stored)
        }
        let victim = endpoints[1]
        let onVictim = try keys.filter {
            try cli.owner(of: HashSlot.of(Array(("tiercache:" + $0.rawValue).utf8))) == victim
        }
        #expect(!onVictim.isEmpty && onVictim.count < keys.count)

        nodes[1].kill()
        for key in keys {
            let value = try await tier.entry(forKey: key)
            #expect(onVictim.contains(key) ? value == nil : value?.value == [9], "\(key)")
        }

        try await nodes[1].start()  // rejoins with its nodes.conf, empty
        for endpoint in endpoints { try await cli.waitForState("ok", on: endpoint) }
        var recovered = false
        for _ in 0..<600 where !recovered {
            recovered =
                (try? await tier.store(CacheEntry(value: [10], storedAt: Date()), forKey: onVictim[0])) == .stored
            if !recovered { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(recovered, "the tier did not recover the restarted node's slots")
        #expect(try await tier.entry(forKey: onVictim[0])?.value == [10])
    }

    @Test(.enabled(if: RedisServers.available && RedisProcess.cliPath != nil, RedisServers.missingMessage))
    func reshardingIsFollowedThroughASKAndMOVED() async throws {
        let seeds = try #require(RedisServers.clusterSeeds)
        let tier = try RedisServers.tier(cluster: true, prefix: "reshard:\(UUID().uuidString):")
        let key = try CacheKey("moving")
        #expect(try await tier.store(CacheEntry(value: [7], storedAt: Date()), forKey: key) == .stored)
        let redisKey = tier.configuration.keyPrefix + key.rawValue
        let slot = HashSlot.of(Array(redisKey.utf8))
        let cli = RedisCLI(seeds: seeds)
        let source = try cli.owner(of: slot)
        let target = try #require(seeds.first { $0 != source })
        let sourceID = try cli.run(source, "CLUSTER", "MYID")
        let targetID = try cli.run(target, "CLUSTER", "MYID")

        // Mid-migration: the key has moved, the slot not yet — the source answers ASK.
        _ = try cli.run(target, "CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", sourceID)
        _ = try cli.run(source, "CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", targetID)
        _ = try cli.run(source, "MIGRATE", target.host, "\(target.port)", redisKey, "0", "5000")
        #expect(try await tier.entry(forKey: key)?.value == [7], "ASK was not followed")

        // Migration finished: every node says the target owns the slot — the source answers MOVED.
        for node in seeds { _ = try cli.run(node, "CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID) }
        #expect(try await tier.entry(forKey: key)?.value == [7], "MOVED was not followed")
        #expect(try await tier.store(CacheEntry(value: [8], storedAt: Date()), forKey: key) == .stored)
        #expect(try await tier.entry(forKey: key)?.value == [8])
        #expect(tier.counterSnapshot.errors == 0)
    }
}

extension RedisProcess {
    static var cliPath: String? {
        serverPath.map { URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("redis-cli").path }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
    }
}

/// Runs redis-cli against one node (for cluster administration the tier itself never does).
struct RedisCLI {
    let seeds: [RedisEndpoint]

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func run(_ node: RedisEndpoint, _ arguments: String...) throws -> String {
        try run(node, arguments: arguments)
    }

    func run(_ node: RedisEndpoint, arguments: [String]) throws -> String {
        guard let path = RedisProcess.cliPath else { throw Failure(description: "redis-cli is missing") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-h", node.host, "-p", "\(node.port)"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, !text.hasPrefix("ERR") else {
            throw Failure(description: "redis-cli \(arguments): \(text)")
        }
        return text
    }

    /// Runs redis-cli with its own arguments (`--cluster create …`).
    func runTool(_ arguments: [String]) throws -> String {
        guard let path = RedisProcess.cliPath else { throw Failure(description: "redis-cli is missing") }
        let (status, text) = try runProcess(URL(fileURLWithPath: path), arguments)
        guard status == 0 else { throw Failure(description: "redis-cli \(arguments): \(text)") }
        return text
    }

    /// ``run(_:_:)`` on a Dispatch thread, for the loops that poll a node: each run blocks its
    /// thread until redis-cli exits, and a loop polling for a minute on the concurrency pool (two
    /// threads here) starved the tests beside it (the proxy's and the Hummingbird app's answers
    /// waited past their clients' timeouts).
    func polled(_ node: RedisEndpoint, _ arguments: String...) async throws -> String {
        try await onDispatch { try run(node, arguments: arguments) }
    }

    /// ``runTool(_:)`` on a Dispatch thread (see ``polled(_:_:)``): polls, and `--cluster create`,
    /// which waits for the nodes to agree.
    func polledTool(_ arguments: [String]) async throws -> String {
        try await onDispatch { try runTool(arguments) }
    }
}

/// Runs `body`, which blocks its thread (a child process, a wait for one), on a Dispatch thread:
/// on the concurrency pool (two threads here) it held a thread every other test needs.
func onDispatch<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

extension RedisCLI {
    /// Waits (at most a minute) until `CLUSTER INFO` on `node` reports `cluster_state:STATE`.
    func waitForState(_ state: String, on node: RedisEndpoint) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if (try? await polled(node, "CLUSTER", "INFO"))?.contains("cluster_state:\(state)") == true { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw Failure(description: "the cluster did not reach cluster_state:\(state)")
    }

    /// The primary serving `slot`, from CLUSTER SHARDS-free parsing of CLUSTER NODES.
    func owner(of slot: Int) throws -> RedisEndpoint {
        let nodes = try run(seeds[0], "CLUSTER", "NODES")
        for line in nodes.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 9, fields[2].contains("master") else { continue }
            let address = fields[1].split(separator: "@")[0]
            for range in fields[8...] where !range.hasPrefix("[") {
                let bounds = range.split(separator: "-").compactMap { Int($0) }
                if let low = bounds.first, let high = bounds.last, (low...high).contains(slot),
                    let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...])
                {
                    return RedisEndpoint(host: String(address[..<colon]), port: port)
                }
            }
        }
        throw Failure(description: "no primary owns slot \(slot)")
    }
}
