import ArgumentParser
import CacheSimulation
import Foundation

/// `--trace`, `--format`, `--limit`: which trace to read and how.
struct TraceOptions: ParsableArguments {
    @Option(help: "The trace file (zstd, gzip and xz are decompressed on the fly).")
    var trace: String

    @Option(
        help: ArgumentHelp(
            "The trace format (default: guessed from the file name).",
            valueName: TraceFormat.allCases.map(\.rawValue).joined(separator: "|")))
    var format: String?

    @Option(help: "Read at most this many requests.")
    var limit: Int?

    @OptionGroup var cacheOptions: TraceCacheOptions

    func validate() throws {
        try Self.validate(format: format)
        if let limit, limit <= 0 { throw ValidationError("--limit must be positive") }
        if let limit, limit > Trace.maximumRequestCount {
            throw ValidationError("--limit is at most \(Trace.maximumRequestCount), the most requests a trace holds")
        }
    }

    /// Throws for a format name no ``TraceFormat`` has.
    static func validate(format: String?) throws {
        if let format, TraceFormat(rawValue: format) == nil {
            throw ValidationError(
                "unknown trace format \"\(format)\"; use one of \(TraceFormat.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
    }

    /// Loads the trace (from its binary copy when there is a current one) and says how long that took.
    func load() throws -> Trace {
        try Self.load(trace, format: format, limit: limit, cache: cacheOptions.cache)
    }

    /// Loads the trace at `path` as ``load()`` does, for a command whose trace is optional.
    static func load(_ path: String, format: String?, limit: Int?, cache: TraceCache?) throws -> Trace {
        let loaded = try Trace.load(
            TraceReader(path: path, format: format.flatMap(TraceFormat.init(rawValue:))), limit: limit, cache: cache)
        if let loading = loaded.loading {
            StandardError.write("loaded \(loaded.name): \(loaded.requestCount) requests in \(loading.summary)\n")
        }
        guard loaded.requestCount > 0 else { throw CommandFailure("\(loaded.name) holds no requests") }
        return loaded
    }
}

/// `--trace-cache`, `--no-trace-cache`: where binary copies of parsed traces are kept.
struct TraceCacheOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where binary copies of parsed traces are kept, so later runs skip parsing (default: $TIERCACHE_TRACE_CACHE, else $XDG_CACHE_HOME/tiercache/traces, else ~/.cache/tiercache/traces); at most 4 GiB of copies, the least recently used removed first.",
            valueName: "directory"))
    var traceCache: String?

    @Flag(help: "Parse the trace without reading or writing a binary copy.")
    var noTraceCache = false

    func validate() throws {
        if noTraceCache, traceCache != nil { throw ValidationError("use --trace-cache or --no-trace-cache, not both") }
        // An empty name would put the copies at the file system's root.
        if traceCache?.isEmpty == true { throw ValidationError("--trace-cache names a directory") }
    }

    /// The cache these options name; nil under `--no-trace-cache`, or when no default directory exists.
    var cache: TraceCache? {
        (noTraceCache ? nil : traceCache ?? TraceCache.defaultDirectory).map { TraceCache(directory: $0) }
    }
}

/// `--unit`: objects or bytes.
extension CapacityUnit: ExpressibleByArgument {}

/// `--output` and `--report`: where report files go and which.
struct ReportOptions: ParsableArguments {
    @Option(help: "Write report files (CSV, JSON, SVG, HTML) into this directory.")
    var output: String?

    @Option(help: "Report formats to write with --output, comma-separated (csv,json,svg,html; all by default).")
    var report: String?

    /// The formats `--report` names (all when it is not given).
    private func formats() throws -> Set<ReportWriter.Format> {
        guard let report else { return Set(ReportWriter.Format.allCases) }
        var formats = Set<ReportWriter.Format>()
        for name in report.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let format = ReportWriter.Format(rawValue: trimmed) else {
                throw ValidationError("unknown report format \"\(trimmed)\"; use csv, json, svg or html")
            }
            formats.insert(format)
        }
        guard !formats.isEmpty else {
            throw ValidationError("--report \"\(report)\" names no format; use csv, json, svg or html")
        }
        return formats
    }

    func validate() throws {
        _ = try formats()
        // Without a directory nothing would be written, and the run would not say so.
        if report != nil, output == nil {
            throw ValidationError("--report chooses the formats --output writes: give --output DIRECTORY too")
        }
        // Made and checked now, not after a run of minutes or hours that would then write nothing.
        if let output {
            do {
                try FileManager.default.createDirectory(at: URLPath.url(output), withIntermediateDirectories: true)
            } catch {
                throw ValidationError("--output \(output): \(error.localizedDescription)")
            }
            guard FileManager.default.isWritableFile(atPath: output) else {
                throw ValidationError("--output \(output) is not writable")
            }
        }
    }

    func write(_ report: Report, baseName: String) throws {
        guard let output else { return }
        let writer = ReportWriter(directory: URLPath.url(output), baseName: baseName, formats: try formats())
        for path in try writer.write(report) { print("wrote \(path)") }
    }
}
