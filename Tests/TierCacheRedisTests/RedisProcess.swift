import Foundation
import NIOCore
import NIOPosix

@testable import TierCacheRedis

/// A redis-server of a test's own, on a free loopback port, that the test may kill and restart.
final class RedisProcess: @unchecked Sendable {
    // @unchecked: `process` and `port` are only touched by the test that owns this object, one
    // call at a time.
    private(set) var port = 0
    private let directory: URL
    private let extraArguments: [String]
    private var process: Process?

    static var serverPath: String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/local/bin").split(separator: ":")
        return paths.map { "\($0)/redis-server" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Where the servers' directories go: under `scripts/test`'s own directory when it runs the
    /// tests (`TIERCACHE_REDIS_DIR`), whose clean-up stops every server with a pid file there
    /// (`scripts/redis-servers stop`): a server does not outlive a test binary that dies (a
    /// sanitizer's halt, a CI kill) before its `deinit` runs.
    private static var parentDirectory: URL {
        ProcessInfo.processInfo.environment["TIERCACHE_REDIS_DIR"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory
    }

    /// - Parameter arguments: more redis-server options (cluster mode, say).
    init(arguments: [String] = []) async throws {
        extraArguments = arguments
        directory = Self.parentDirectory.appendingPathComponent("tiercache-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A port that was free a moment ago may be taken by another test (a listener, or the
        // local end of a connection) before redis-server binds it; the server then exits, and
        // another free port is tried.
        var lastFailure: (any Error)?
        for _ in 0..<5 {
            port = try await Self.freePort(cluster: arguments.contains("--cluster-enabled"))
            do {
                try await start()
                return
            } catch let failure as PortTaken {
                lastFailure = failure
            }
        }
        throw lastFailure ?? PortTaken(port: port)
    }

    /// A free port from 20000–22767, below the range the kernel gives out for `bind(0)` and
    /// outgoing connections (32768–60999 on Linux, 49152–65535 elsewhere): a test that kills its
    /// server and starts it again on the same port must find the port still free, and a port from
    /// that range could be taken meanwhile by any connection. A cluster node also listens on port
    /// + 10000 (its bus), below the range too.
    private static func freePort(cluster: Bool) async throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20_000...22_767)
            guard await isFree(port) else { continue }
            if cluster, !(await isFree(port + 10_000)) { continue }
            return port
        }
        throw PortTaken(port: 0)
    }

    /// Whether a listener can bind `port` on the loopback address now.
    private static func isFree(_ port: Int) async -> Bool {
        guard
            let probe = try? await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(
                host: "127.0.0.1", port: port
            ).get()
        else { return false }
        try? await probe.close()
        return true
    }

    /// Starts the server on ``port`` and returns once it accepts connections, as its own log
    /// says (a connection alone could reach another program that took the port).
    /// - Throws: ``PortTaken`` when the server exits instead (it could not bind the port).
    func start() async throws {
        guard let path = Self.serverPath else { throw CocoaError(.fileNoSuchFile) }
        let log = directory.appendingPathComponent("redis-server.log")
        try? FileManager.default.removeItem(at: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        // The pid file: redis-server writes it in the foreground too, and removes it when it shuts
        // down cleanly.
        process.arguments =
            [
                "--bind", "127.0.0.1", "--port", "\(port)", "--save", "", "--appendonly", "no", "--dir", directory.path,
                "--logfile", log.path, "--pidfile", pidFile.path,
            ] + extraArguments
        // None of the test process's own: `swift test` waits for the end of its output, and a server
        // left running by a test binary that died held it open, so the run never ended.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Polls an external process: there is no event to wait for (up to a minute: a loaded
        // machine starts processes slowly).
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                self.process = nil
                throw PortTaken(port: port)
            }
            let ready =
                (try? String(contentsOf: log, encoding: .utf8))?.contains("Ready to accept connections") ?? false
            if ready,
                let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(
                    host: "127.0.0.1", port: port
                ).get()
            {
                try? await channel.close()
                return
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "redis-server did not start on port \(port)"])
    }

    /// SIGKILL: no shutdown, connections drop mid-flight.
    func kill() {
        if let process {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // A SIGKILL leaves the pid file behind, and the clean-up must not signal whatever
            // process is given the pid next.
            try? FileManager.default.removeItem(at: pidFile)
        }
        process = nil
    }

    /// Read by `scripts/redis-servers stop` (it looks one directory down).
    private var pidFile: URL { directory.appendingPathComponent("redis-server.pid") }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// redis-server exited at start: another program took its port first.
struct PortTaken: Error, CustomStringConvertible {
    let port: Int
    var description: String { "redis-server could not listen on port \(port)" }
}

/// A Redis Cluster of a test's own (so the shared one stays whole), made of `nodes` servers started
/// with `options` and joined by `redis-cli --cluster create` with `replicas` replicas per primary;
/// returns once every node reports `cluster_state:ok`.
struct TestCluster {
    let nodes: [RedisProcess]
    let endpoints: [RedisEndpoint]
    let cli: RedisCLI

    init(nodes count: Int, replicas: Int, options: [String]) async throws {
        var nodes: [RedisProcess] = []
        for _ in 0..<count { nodes.append(try await RedisProcess(arguments: ["--cluster-enabled", "yes"] + options)) }
        let endpoints = nodes.map { RedisEndpoint(host: "127.0.0.1", port: $0.port) }
        let cli = RedisCLI(seeds: endpoints)
        // On a Dispatch thread: redis-cli waits, a second at a time, for the nodes to agree, and
        // clusters made at once held both of the concurrency pool's threads for seconds.
        _ = try await cli.polledTool(
            ["--cluster", "create"] + endpoints.map { "\($0.host):\($0.port)" } + [
                "--cluster-replicas", String(replicas), "--cluster-yes",
            ])
        for endpoint in endpoints { try await cli.waitForState("ok", on: endpoint) }
        (self.nodes, self.endpoints, self.cli) = (nodes, endpoints, cli)
    }
}
