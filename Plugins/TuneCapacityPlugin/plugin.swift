import Foundation
import PackagePlugin

/// `swift package tune-capacity --trace FILE [tiercache tune options]`: runs the capacity tuner on a
/// trace and writes its report (CSV, JSON, SVG, HTML) into `capacity-report/` in the package
/// directory, unless `--output` names another directory.
///
/// The tuner replays millions of requests, so the plugin builds `tiercache` in release mode first
/// rather than using a debug build.
@main
struct TuneCapacityPlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var arguments = arguments
        if arguments.contains("--help") || arguments.contains("-h") || arguments.isEmpty {
            print(
                "usage: swift package --allow-writing-to-package-directory tune-capacity --trace FILE [--target-hit-ratio 0.9] [--sample-rate 0.01] [--policy s3-fifo,arc] [--unit objects|bytes]"
            )
            if arguments.isEmpty { return }
        }
        let packageDirectory = context.package.directoryURL
        // Relative paths are relative to the package, where `swift package` runs (the tool runs
        // elsewhere), given as `--trace PATH` or `--trace=PATH` alike.
        let hasOutput = resolvePaths(of: "--output", in: &arguments, against: packageDirectory)
        _ = resolvePaths(of: "--trace", in: &arguments, against: packageDirectory)
        if !hasOutput {
            arguments += ["--output", packageDirectory.appendingPathComponent("capacity-report").path]
        }
        let build = try packageManager.build(
            .product("tiercache"), parameters: .init(configuration: .release, logging: .concise))
        guard build.succeeded,
            let tool = build.builtArtifacts.first(where: {
                $0.kind == .executable && $0.url.lastPathComponent == "tiercache"
            })
        else {
            Diagnostics.error("building tiercache failed:\n\(build.logText)")
            throw PluginFailure.buildFailed
        }
        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["tune"] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PluginFailure.tunerFailed(process.terminationStatus) }
    }
}

enum PluginFailure: Error, CustomStringConvertible {
    case buildFailed
    case tunerFailed(Int32)

    var description: String {
        switch self {
        case .buildFailed: "could not build the tiercache tool"
        case .tunerFailed(let status): "tiercache tune exited with status \(status)"
        }
    }
}

/// Makes every relative path given to `option` (`--option PATH` or `--option=PATH`) absolute
/// against `directory`; true if the option is given at all.
private func resolvePaths(of option: String, in arguments: inout [String], against directory: URL) -> Bool {
    func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : directory.appendingPathComponent(path).path
    }
    var found = false
    var index = 0
    while index < arguments.count {
        if arguments[index] == "--" { break }  // what follows is not an option
        if arguments[index] == option {
            found = true
            if index + 1 < arguments.count { arguments[index + 1] = absolute(arguments[index + 1]) }
            index += 2
            continue
        }
        if arguments[index].hasPrefix(option + "=") {
            found = true
            arguments[index] = option + "=" + absolute(String(arguments[index].dropFirst(option.count + 1)))
        }
        index += 1
    }
    return found
}
