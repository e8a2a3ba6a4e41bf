import Foundation
import NIOCore
import NIOPosix

/// A redis-server of a test's own, on a free loopback port, that the test may kill and restart.
final class RedisProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched by the test that owns this object, one call at a time.
    let port: Int
    private let directory: URL
    private let extraArguments: [String]
    private var process: Process?

    static var serverPath: String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/local/bin").split(separator: ":")
        return paths.map { "\($0)/redis-server" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// - Parameter arguments: more redis-server options (cluster mode, say).
    init(arguments: [String] = []) async throws {
        extraArguments = arguments
        // Let the kernel pick a free port, then hand it to Redis; a cluster node also listens on
        // port + 10000 (its bus), which must stay a valid port.
        var chosen = 0
        repeat {
            let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
            chosen = probe.localAddress?.port ?? 0
            try await probe.close()
        } while arguments.contains("--cluster-enabled") && chosen > 55_535
        port = chosen
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await start()
    }

    func start() async throws {
        guard let path = Self.serverPath else { throw CocoaError(.fileNoSuchFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--bind", "127.0.0.1", "--port", "\(port)", "--save", "", "--appendonly", "no", "--dir", directory.path] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Ready when it accepts a connection.
        for _ in 0..<200 {
            if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get() {
                try? await channel.close()
                return
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "redis-server did not start on port \(port)"])
    }

    /// SIGKILL: no shutdown, connections drop mid-flight.
    func kill() {
        if let process { Foundation.kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        process = nil
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }
}
