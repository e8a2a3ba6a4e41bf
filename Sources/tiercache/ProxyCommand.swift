import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `tiercache proxy …` runs `tiercache-proxy …`, a separate executable, so that the benchmark
/// tool (the main job) does not build the HTTP server and client stacks it never uses.
struct ProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Run the caching reverse proxy (the tiercache-proxy executable; see tiercache-proxy --help).",
        discussion: "Build it with `swift build -c release --product tiercache-proxy`; it must sit beside tiercache.")

    @Argument(parsing: .allUnrecognized, help: "Options for tiercache-proxy.")
    var arguments: [String] = []

    func run() throws {
        // The running executable's own path: argv[0] is a bare name when tiercache is found on
        // PATH, and would be looked up beside the current directory.
        let directory = InspectCommand.currentExecutable().resolvingSymlinksInPath().deletingLastPathComponent()
        let executable = directory.appendingPathComponent("tiercache-proxy").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw CommandFailure(
                "tiercache-proxy is not built beside \(directory.path); run `swift build -c release --product tiercache-proxy` (or `swift run tiercache-proxy …`)"
            )
        }
        // Replace this process, so that signals (SIGTERM for a graceful stop) reach the proxy.
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        execv(executable, argv)
        throw CommandFailure("could not start \(executable): \(String(cString: strerror(errno)))")
    }
}
